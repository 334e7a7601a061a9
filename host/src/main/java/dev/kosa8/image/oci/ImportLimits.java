package dev.kosa8.image.oci;

/**
 * The bounds every decoder of an image archive keeps: nothing an archive says
 * makes kosa8 read, write or hold more than these.
 *
 * @param maxUnpackedBytes  the bytes of file content all layers together may unpack to (a gzip bomb stops here)
 * @param maxArchiveBytes   the bytes of the archive's own members (blobs, manifests) kept while importing
 * @param maxLayers         layers in one image
 * @param maxEntries        members in one tar stream (a layer or the archive)
 * @param maxPathBytes      bytes of one member's name or link target
 * @param maxJsonBytes      bytes of one manifest, index or config
 * @param maxPaxBytes       bytes of one PAX extended header
 */
public record ImportLimits(long maxUnpackedBytes, long maxArchiveBytes, int maxLayers, int maxEntries,
                           int maxPathBytes, int maxJsonBytes, int maxPaxBytes) {
    /** 8 GiB unpacked, 8 GiB of blobs, 128 layers, a million members, 4 KiB names, 4 MiB JSON, 1 MiB PAX. */
    public static final ImportLimits DEFAULT = new ImportLimits(8L << 30, 8L << 30, 128, 1_000_000, 4096,
            4 << 20, 1 << 20);

    public ImportLimits {
        if (maxUnpackedBytes <= 0 || maxArchiveBytes <= 0 || maxLayers <= 0 || maxEntries <= 0 || maxPathBytes <= 0
                || maxJsonBytes <= 0 || maxPaxBytes <= 0) {
            throw new IllegalArgumentException("every limit must be positive");
        }
    }

    public ImportLimits withMaxUnpackedBytes(long bytes) {
        return new ImportLimits(bytes, maxArchiveBytes, maxLayers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes);
    }

    public ImportLimits withMaxLayers(int layers) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, layers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes);
    }

    public ImportLimits withMaxEntries(int entries) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, maxLayers, entries, maxPathBytes, maxJsonBytes,
                maxPaxBytes);
    }
}
