package dev.kosa8.checkpoint;

/**
 * What a snapshot keeps of the folder. Sockets and device nodes are not
 * kept: the 9P server never creates them (its mknod makes regular files and
 * FIFOs only), a socket is meaningless without the process that listens on it,
 * and a device node is not the guest's to have.
 */
enum Kind {
    DIR("dir"), FILE("file"), SYMLINK("symlink"), FIFO("fifo");

    final String json;

    Kind(String json) {
        this.json = json;
    }

    static Kind ofJson(String s) {
        for (Kind k : values()) {
            if (k.json.equals(s)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown entry kind " + s);
    }
}
