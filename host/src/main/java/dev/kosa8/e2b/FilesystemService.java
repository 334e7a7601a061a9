package dev.kosa8.e2b;

/**
 * envd's {@code filesystem.Filesystem} service. Not served yet: it waits for the agent's file operations
 * (stat, list, make dir, remove, move, watch); every call is answered unimplemented, saying so.
 */
final class FilesystemService {
    private final E2bBackend backend;

    FilesystemService(E2bBackend backend) {
        this.backend = backend;
    }

    void call(String method, E2bSandbox s, ConnectCall c, String user) {
        throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "filesystem." + method + " is not served by kosa8's"
                + " E2B listener yet (docs/e2b.md)");
    }
}
