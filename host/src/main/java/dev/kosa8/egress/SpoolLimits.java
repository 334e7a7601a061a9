package dev.kosa8.egress;

/**
 * How much of the guest's request bodies the broker keeps on disk while it judges them ({@link BodySpool}).
 *
 * @param perRequest the largest request body, in bytes: past it the guest gets 413
 * @param perSandbox the bodies of one sandbox on disk at once: a body that would pass it gets 413 too
 */
record SpoolLimits(long perRequest, long perSandbox) {
    /** 1 GiB per request, 2 GiB per sandbox: a big git push or container layer, two at once. */
    static final SpoolLimits DEFAULT = new SpoolLimits(1L << 30, 2L << 30);

    SpoolLimits {
        if (perRequest <= Broker.MAX_BODY || perSandbox < perRequest) {
            throw new IllegalArgumentException("spool limits must be over the in-memory bound and per sandbox at "
                    + "least per request: " + perRequest + ", " + perSandbox);
        }
    }
}
