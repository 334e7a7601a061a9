package dev.kosa8.image;

/**
 * {@code manifest.json} of an image: the three parts it joins and the exact
 * Debian packages it was built from, which {@link ImageBuilder#ensure()} keeps
 * using until {@code kosa8 image build} looks for newer ones.
 */
record ImageManifest(int format, String id, String created, String kernelVersion,
                     DebPackage kernelPackage, DebPackage busyboxPackage, PartHashes parts) {
    static final int FORMAT = 1;
}
