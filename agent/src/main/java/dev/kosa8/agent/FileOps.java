package dev.kosa8.agent;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The file operations of {@link FileOp} but the watch ({@link DirWatch}), as the agent runs them: as root, with the
 * JDK's file API on the sandbox's root; what a request's user makes is chowned to that user. Every failure is a
 * {@link Failure} with the errno-like code the host maps (docs/api.md, "Files"). Plain Java: the tests run it on the
 * build machine.
 */
final class FileOps {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};
    private static final LinkOption[] FOLLOW = {};

    private final GuestUsers users;

    FileOps(GuestUsers users) {
        this.users = users;
    }

    /** A failed operation: its code and what to tell the caller. */
    static final class Failure extends RuntimeException {
        final Message.ErrorCode code;

        Failure(Message.ErrorCode code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }

    FileStat stat(String path, boolean follow) {
        try {
            return stat(Path.of(path), follow);
        } catch (IOException e) {
            throw failure(e, path);
        }
    }

    FileStat stat(Path p, boolean follow) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid,size,lastModifiedTime",
                follow ? FOLLOW : NOFOLLOW);
        int mode = (Integer) a.get("mode");
        int uid = (Integer) a.get("uid");
        int gid = (Integer) a.get("gid");
        String target = "";
        if ((mode & 0170000) == 0120000 || (follow && Files.isSymbolicLink(p))) {
            target = Files.readSymbolicLink(p).toString();
        }
        return new FileStat(p.toString(), type(mode), (Long) a.get("size"), mode & 07777, uid, gid,
                users.userName(uid), users.groupName(gid), ((FileTime) a.get("lastModifiedTime")).toMillis(),
                target);
    }

    private static FileStat.Type type(int mode) {
        return switch (mode & 0170000) {
            case 0100000 -> FileStat.Type.FILE;
            case 0040000 -> FileStat.Type.DIRECTORY;
            case 0120000 -> FileStat.Type.SYMLINK;
            case 0010000 -> FileStat.Type.FIFO;
            case 0140000 -> FileStat.Type.SOCKET;
            case 0020000 -> FileStat.Type.CHAR_DEVICE;
            case 0060000 -> FileStat.Type.BLOCK_DEVICE;
            default -> FileStat.Type.OTHER;
        };
    }

    /**
     * Lists {@code op}'s directory (a link to one is followed) depth-first, each directory's entry before its
     * contents, symbolic links never descended into, to {@code sink}, stopping after {@code maxEntries} or once
     * {@code cancelled}. An entry gone between reading its directory and its stat is left out.
     */
    void list(FileOp.ListDir op, Consumer<FileStat> sink, BooleanSupplier cancelled) {
        Path root = Path.of(op.path());
        try {
            if (!Files.readAttributes(root, BasicFileAttributes.class).isDirectory()) {
                throw new Failure(Message.ErrorCode.NOT_DIRECTORY, op.path() + " is not a directory");
            }
            int[] left = {op.maxEntries()};
            list(root, op.depth(), left, sink, cancelled);
        } catch (IOException e) {
            throw failure(e, op.path());
        }
    }

    private void list(Path dir, int depth, int[] left, Consumer<FileStat> sink, BooleanSupplier cancelled)
            throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                if (left[0] <= 0 || cancelled.getAsBoolean()) {
                    return;
                }
                FileStat s;
                try {
                    s = stat(p, false);
                } catch (NoSuchFileException gone) {
                    continue;
                }
                left[0]--;
                sink.accept(s);
                if (depth > 1 && s.type() == FileStat.Type.DIRECTORY) {
                    try {
                        list(p, depth - 1, left, sink, cancelled);
                    } catch (NoSuchFileException | AccessDeniedException | NotDirectoryException skipped) {
                        // gone or closed since: its entry stands, its contents are not listed
                    }
                }
            }
        }
    }

    /** mkdir -p: every missing directory made with the mode and owned by the user; the directory's stat. */
    FileStat makeDir(FileOp.MakeDir op, String user) {
        GuestUsers.Ids ids = users.ids(user);
        Path target = Path.of(op.path());
        try {
            if (Files.exists(target, NOFOLLOW) || Files.isDirectory(target)) {
                if (!Files.isDirectory(target)) {
                    throw new Failure(Message.ErrorCode.EXISTS, op.path() + " exists and is not a directory");
                }
                if (!op.existOk()) {
                    throw new Failure(Message.ErrorCode.EXISTS, op.path() + " already exists");
                }
                return stat(target, true);
            }
            java.util.ArrayDeque<Path> missing = new java.util.ArrayDeque<>();
            for (Path p = target; p != null && !Files.isDirectory(p); p = p.getParent()) {
                if (p != target && Files.exists(p, NOFOLLOW)) {
                    throw new Failure(Message.ErrorCode.NOT_DIRECTORY, p + " is not a directory");
                }
                missing.push(p);
            }
            for (Path p : missing) {
                try {
                    Files.createDirectory(p);
                } catch (FileAlreadyExistsException raced) {
                    if (!Files.isDirectory(p)) {
                        throw raced;
                    }
                    continue;
                }
                Files.setAttribute(p, "unix:mode", op.mode(), NOFOLLOW);
                own(p, ids);
            }
            return stat(target, false);
        } catch (IOException e) {
            throw failure(e, op.path());
        }
    }

    /** Gives a file made for a user to that user (root's own is left as made). */
    static void own(Path p, GuestUsers.Ids ids) throws IOException {
        if (ids.uid() != 0 || ids.gid() != 0) {
            Files.setAttribute(p, "unix:gid", ids.gid(), NOFOLLOW);
            Files.setAttribute(p, "unix:uid", ids.uid(), NOFOLLOW);
        }
    }

    void remove(FileOp.Remove op, BooleanSupplier cancelled) {
        Path target = Path.of(op.path());
        if (target.getNameCount() == 0) {
            throw new Failure(Message.ErrorCode.INVALID, "the root directory is not removed");
        }
        try {
            if (!op.recursive() || !Files.isDirectory(target, NOFOLLOW)) {
                Files.delete(target);
                return;
            }
            Files.walkFileTree(target, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return cancelled.getAsBoolean() ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    if (e != null) {
                        throw e;
                    }
                    Files.deleteIfExists(dir);
                    return cancelled.getAsBoolean() ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw failure(e, op.path());
        }
    }

    /** rename(2), or a copy and delete across file systems; the new path's stat. */
    FileStat rename(FileOp.Rename op) {
        Path from = Path.of(op.from());
        Path to = Path.of(op.to());
        try {
            if (!Files.exists(from, NOFOLLOW)) {
                throw new NoSuchFileException(op.from());
            }
            if (!op.replace() && Files.exists(to, NOFOLLOW)) {
                throw new Failure(Message.ErrorCode.EXISTS, op.to() + " already exists");
            }
            try {
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException otherFileSystem) {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
            }
            return stat(to, false);
        } catch (IOException e) {
            throw failure(e, op.from());
        }
    }

    /** The code and words for a failed file call: by its exception, else by the errno text the JDK put in it. */
    static Failure failure(IOException e, String path) {
        String file = e instanceof FileSystemException f && f.getFile() != null ? f.getFile() : path;
        return switch (e) {
            case NoSuchFileException n -> notFound(file);
            case FileAlreadyExistsException x -> new Failure(Message.ErrorCode.EXISTS, file + " already exists");
            case DirectoryNotEmptyException x -> new Failure(Message.ErrorCode.NOT_EMPTY, file
                    + " is a directory that is not empty: remove it recursively");
            case NotDirectoryException x -> new Failure(Message.ErrorCode.NOT_DIRECTORY, file + " is not a directory");
            case AccessDeniedException x -> new Failure(Message.ErrorCode.PERMISSION, "permission denied: " + file);
            case FileSystemException f -> byReason(f, file);
            default -> new Failure(Message.ErrorCode.INTERNAL, file + ": " + e.getMessage());
        };
    }

    /** ENOENT, or ENOTDIR that the JDK reports as a missing file: a part of the path is a file. */
    private static Failure notFound(String file) {
        for (Path p = Path.of(file).getParent(); p != null; p = p.getParent()) {
            if (Files.exists(p, NOFOLLOW) || Files.exists(p)) {
                if (!Files.isDirectory(p)) {
                    return new Failure(Message.ErrorCode.NOT_DIRECTORY, p + " is not a directory");
                }
                break;
            }
        }
        return new Failure(Message.ErrorCode.NOT_FOUND, file + " does not exist");
    }

    private static Failure byReason(FileSystemException f, String file) {
        String r = f.getReason() == null ? "" : f.getReason();
        Message.ErrorCode code;
        if (r.contains("Not a directory")) {
            code = Message.ErrorCode.NOT_DIRECTORY;
        } else if (r.contains("Is a directory")) {
            code = Message.ErrorCode.IS_DIRECTORY;
        } else if (r.contains("File name too long")) {
            code = Message.ErrorCode.TOO_LONG;
        } else if (r.contains("No space left") || r.contains("quota")) {
            code = Message.ErrorCode.NO_SPACE;
        } else if (r.contains("Read-only file system") || r.contains("Operation not permitted")) {
            code = Message.ErrorCode.PERMISSION;
        } else if (r.contains("Directory not empty")) {
            code = Message.ErrorCode.NOT_EMPTY;
        } else if (r.contains("symbolic link") || r.contains("Invalid argument")) {
            code = Message.ErrorCode.INVALID;
        } else if (r.contains("File exists")) {
            code = Message.ErrorCode.EXISTS;
        } else if (r.contains("No such file")) {
            return notFound(file);
        } else {
            code = Message.ErrorCode.INTERNAL;
        }
        return new Failure(code, file + ": " + (r.isEmpty() ? f.getMessage() : r));
    }
}
