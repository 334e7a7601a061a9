package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;

/** The errors of the archive client: each says what was refused and what to do. */
final class ArchiveErrors {
    private ArchiveErrors() {
    }

    /** Data from the archive (or the cache) that does not parse: refused, nothing is guessed. */
    static KosaException malformed(String what) {
        return new KosaException(KosaException.Kind.IMAGE, "the Debian archive sent data kosa8 cannot read: " + what,
                "check the mirror (KOSA8_DEBIAN_MIRROR) and any proxy in between; a mirror mid-update can also "
                        + "cause this, so try again in a few minutes");
    }

    /** Data whose signature or hash does not check: refused. */
    static KosaException unverified(String what) {
        return new KosaException(KosaException.Kind.IMAGE, "refused unverified data from the Debian archive: " + what,
                "nothing was installed from it; check the mirror (KOSA8_DEBIAN_MIRROR) and any proxy in between "
                        + "(a proxy that rewrites content breaks this), then run `kosa8 image build` again");
    }

    /** The network failed. */
    static KosaException unreachable(String what, Exception cause) {
        return new KosaException(KosaException.Kind.IMAGE, "could not fetch " + what + ": " + cause.getMessage(),
                "check the network, the mirror (KOSA8_DEBIAN_MIRROR) and the proxy (https_proxy / http_proxy)",
                cause);
    }
}
