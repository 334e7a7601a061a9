package dev.kosa8.image.oci;

/**
 * The bounds every decoder of an image archive keeps: nothing an archive says
 * makes kosa8 read, write or hold more than these.
 *
 * @param maxUnpackedBytes    the bytes of file content all layers together may unpack to (a gzip bomb stops here)
 * @param maxArchiveBytes     the bytes of the archive's own members (blobs, manifests) kept while importing
 * @param maxLayers           layers in one image
 * @param maxEntries          members in one tar stream (a layer or the archive)
 * @param maxPathBytes        bytes of one member's name or link target
 * @param maxJsonBytes        bytes of one manifest, index or config
 * @param maxPaxBytes         bytes of one PAX extended header
 * @param maxLayerStreamBytes bytes one layer's tar stream decompresses to, headers and padding included (a bomb
 *                            that hides its bytes outside file content stops here)
 * @param maxXattrs           extended attributes of one member
 * @param maxXattrBytes       bytes of one member's extended attributes, names and values together
 * @param maxImageXattrBytes  bytes of all members' extended attributes, every layer's, held until the disk is written
 */
public record ImportLimits(long maxUnpackedBytes, long maxArchiveBytes, int maxLayers, int maxEntries,
                           int maxPathBytes, int maxJsonBytes, int maxPaxBytes, long maxLayerStreamBytes,
                           int maxXattrs, int maxXattrBytes, long maxImageXattrBytes) {
    /**
     * 8 GiB unpacked, 8 GiB of blobs, 128 layers, a million members, 4 KiB names, 4 MiB JSON, 1 MiB PAX, 16 GiB
     * per layer stream, 64 attributes and 64 KiB of them per member, 16 MiB of them in all.
     */
    public static final ImportLimits DEFAULT = new ImportLimits(8L << 30, 8L << 30, 128, 1_000_000, 4096,
            4 << 20, 1 << 20, 16L << 30, 64, 64 << 10, 16L << 20);

    public ImportLimits {
        if (maxUnpackedBytes <= 0 || maxArchiveBytes <= 0 || maxLayers <= 0 || maxEntries <= 0 || maxPathBytes <= 0
                || maxJsonBytes <= 0 || maxPaxBytes <= 0 || maxLayerStreamBytes <= 0 || maxXattrs <= 0
                || maxXattrBytes <= 0 || maxImageXattrBytes <= 0) {
            throw new IllegalArgumentException("every limit must be positive");
        }
    }

    public ImportLimits withMaxUnpackedBytes(long bytes) {
        return new ImportLimits(bytes, maxArchiveBytes, maxLayers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes, maxLayerStreamBytes, maxXattrs, maxXattrBytes, maxImageXattrBytes);
    }

    public ImportLimits withMaxLayers(int layers) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, layers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes, maxLayerStreamBytes, maxXattrs, maxXattrBytes, maxImageXattrBytes);
    }

    public ImportLimits withMaxEntries(int entries) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, maxLayers, entries, maxPathBytes, maxJsonBytes,
                maxPaxBytes, maxLayerStreamBytes, maxXattrs, maxXattrBytes, maxImageXattrBytes);
    }

    public ImportLimits withMaxLayerStreamBytes(long bytes) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, maxLayers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes, bytes, maxXattrs, maxXattrBytes, maxImageXattrBytes);
    }

    /** @param count per member; @param bytes per member; @param imageBytes all members' */
    public ImportLimits withXattrLimits(int count, int bytes, long imageBytes) {
        return new ImportLimits(maxUnpackedBytes, maxArchiveBytes, maxLayers, maxEntries, maxPathBytes, maxJsonBytes,
                maxPaxBytes, maxLayerStreamBytes, count, bytes, imageBytes);
    }
}
