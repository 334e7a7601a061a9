package dev.kosa8.cli;

import dev.kosa8.client.ExecChannel;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.FileMode;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "cp", mixinStandardHelpOptions = true, description = {"Copy a file into or out of a sandbox. Streams any size; nothing is left half-written."},
        footer = {"", "Examples:", "  kosa8 cp data.csv ID:/root/data.csv", "  kosa8 cp ID:/root/out.tar.gz ./out.tar.gz"})
final class CpCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "SRC", description = "A host path, or ID:/path in a sandbox.")
    String source;

    @Parameters(index = "1", paramLabel = "DEST", description = "A host path, or ID:/path in a sandbox.")
    String dest;

    @Override
    public Integer call() throws IOException {
        boolean fromSandbox = isRemote(source);
        boolean toSandbox = isRemote(dest);
        if (fromSandbox == toSandbox) {
            throw new KosaException(KosaException.Kind.USAGE, "exactly one of SRC and DEST must be ID:/path",
                    "like: kosa8 cp file.txt ID:/root/file.txt");
        }
        return toSandbox ? upload(Path.of(source), dest) : download(source, Path.of(dest));
    }

    static boolean isRemote(String s) {
        int c = s.indexOf(':');
        return c > 0 && s.substring(0, c).matches("[0-9a-f]{1,12}") && s.startsWith("/", c + 1);
    }

    private int upload(Path local, String remote) throws IOException {
        if (!Files.isRegularFile(local)) {
            throw new KosaException(KosaException.Kind.USAGE, local + " is not a file", "");
        }
        String id = remote.substring(0, remote.indexOf(':'));
        String path = remote.substring(remote.indexOf(':') + 1);
        int mode = FileMode.of(Files.getPosixFilePermissions(local));
        ExecChannel s = new ExecChannel(main.daemon().upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"));
        s.send(new Message.PutFile(ExecChannel.CH, path, mode));
        InputStream in = Files.newInputStream(local);
        s.pumpStdin(in);
        int code = s.await(OutputStream.nullOutputStream(), System.err, null);
        in.close();
        return code;
    }

    private int download(String remote, Path local) throws IOException {
        String id = remote.substring(0, remote.indexOf(':'));
        String path = remote.substring(remote.indexOf(':') + 1);
        Path target = Files.isDirectory(local) ? local.resolve(Path.of(path).getFileName().toString()) : local;
        int[] mode = {0644};
        // private while it is written, as the file in the sandbox may be; its own mode once complete
        try (AtomicFile.Pending file = AtomicFile.begin(target, PosixFilePermissions.fromString("rw-------"))) {
            OutputStream out = file.stream();
            ExecChannel s = new ExecChannel(main.daemon().upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"));
            s.send(new Message.GetFile(ExecChannel.CH, path));
            int code = s.await(out, System.err, new ExecChannel.FileSink() {
                @Override
                public void info(long size, int m) {
                    mode[0] = m;
                }

                @Override
                public void write(byte[] bytes) throws IOException {
                    out.write(bytes);
                }
            });
            Files.setPosixFilePermissions(file.path(), FileMode.permissions(mode[0]));
            file.commit();
            return code;
        }
    }
}
