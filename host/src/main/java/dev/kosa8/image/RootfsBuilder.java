package dev.kosa8.image;

import dev.kosa8.host.KosaException;

import java.util.Map;
import java.util.function.Predicate;

/**
 * Where the root filesystem is built (docs/image.md, "The builder VM"): in a guest ({@link #VM}: needs only
 * QEMU, {@code qemu-img} and Java, no root) or on the host with mmdebstrap ({@link #HOST}: a Debian host,
 * as root). {@value #ENVIRONMENT} chooses ({@code vm}, {@code host}); unset, the host's mmdebstrap is the
 * fast path where it can run (root, mmdebstrap installed) and the builder VM everywhere else, so a user who
 * is not root, on any distribution, builds without sudo.
 */
enum RootfsBuilder {
    VM, HOST;

    static final String ENVIRONMENT = "KOSA8_IMAGE_BUILDER";

    /**
     * Whether the builder VM may build the workspace's kernel module where the host lacks the compiler: always,
     * unless {@value #ENVIRONMENT} says {@code host} (whoever runs kosa8, root or not, so the kernel part is the
     * same for both).
     */
    static boolean mayBuildModule(Map<String, String> env) {
        return !env.getOrDefault(ENVIRONMENT, "").strip().equalsIgnoreCase("host");
    }

    /** The builder for this host: {@code installed} says whether a program is on PATH. */
    static RootfsBuilder choose(Map<String, String> env, boolean root, Predicate<String> installed) {
        String asked = env.getOrDefault(ENVIRONMENT, "").strip().toLowerCase(java.util.Locale.ROOT);
        return switch (asked) {
            case "vm" -> VM;
            case "host" -> HOST;
            case "", "auto" -> root && installed.test("mmdebstrap") ? HOST : VM;
            default -> throw new KosaException(KosaException.Kind.USAGE, ENVIRONMENT + "=" + asked
                    + " names no way to build the root filesystem", "set it to `vm` (a builder VM: QEMU and Java "
                    + "alone) or `host` (mmdebstrap on this host, as root), or unset it to let kosa8 choose");
        };
    }

    /**
     * Fails, saying what to do, where this builder cannot run: the VM without kosa8's own archive client, the
     * host's mmdebstrap without root. {@code command} is the kosa8 command to run again under sudo.
     */
    void requireUsable(boolean root, boolean archiveClient, String command) {
        if (this == VM && !archiveClient) {
            throw new KosaException(KosaException.Kind.USAGE, "the builder VM needs kosa8's own archive client, "
                    + "which KOSA8_DEBIAN_FETCH=apt turns off", "unset KOSA8_DEBIAN_FETCH, or build on a Debian host "
                    + "as root with " + ENVIRONMENT + "=host");
        }
        if (this == HOST && !root) {
            throw new KosaException(KosaException.Kind.IMAGE,
                    "building the guest's root filesystem on the host (" + ENVIRONMENT + "=host) needs "
                            + "root: mmdebstrap must create files owned by other users and device nodes",
                    "run `sudo --preserve-env=HOME,XDG_DATA_HOME,XDG_CACHE_HOME,KOSA8_HOME kosa8 " + command
                            + "` once; it hands the files back to you, and later builds reuse the root filesystem; "
                            + "or unset " + ENVIRONMENT + " to build it in a builder VM, without root");
        }
    }
}
