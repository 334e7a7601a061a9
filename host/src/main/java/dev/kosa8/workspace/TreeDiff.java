package dev.kosa8.workspace;

import dev.kosa8.host.UnifiedDiff;
import java.util.TreeSet;

/**
 * A review's view of one held unit: unified diffs of text between the folder's version and the
 * held one, file by file through a directory, and the held size. Both sides are read beneath their
 * roots ({@link TreeCopy}), never following a symlink. Files above {@link #MAX_TEXT} bytes, or
 * with a NUL byte, are shown by size only.
 */
final class TreeDiff {
    static final int MAX_TEXT = 256 * 1024;

    private TreeDiff() {
    }

    static long size(int root, String path) throws ErrnoException {
        LinuxFs.Stat st = TreeCopy.statOrNull(root, path);
        if (st == null) {
            return 0;
        }
        if (!st.isDir()) {
            return st.size();
        }
        long total = 0;
        for (String n : TreeCopy.names(root, path)) {
            total += size(root, Fid.child(path, n));
        }
        return total;
    }

    /** The diff from the folder's {@code path} (below {@code host}) to the held one (below {@code held}). */
    static String diff(int host, int held, String path) throws ErrnoException {
        StringBuilder out = new StringBuilder();
        diff(host, held, path, out);
        return out.toString();
    }

    private static void diff(int host, int held, String path, StringBuilder out) throws ErrnoException {
        LinuxFs.Stat a = TreeCopy.statOrNull(host, path);
        LinuxFs.Stat b = TreeCopy.statOrNull(held, path);
        boolean aDir = a != null && a.isDir();
        boolean bDir = b != null && b.isDir();
        if (aDir || bDir) {
            TreeSet<String> names = new TreeSet<>();
            if (aDir) {
                names.addAll(TreeCopy.names(host, path));
            } else if (a != null) {
                out.append("--- a/").append(path).append("\n+++ /dev/null (becomes a directory)\n");
            }
            if (bDir) {
                names.addAll(TreeCopy.names(held, path));
            } else if (b != null) {
                out.append("--- a/").append(path).append(" (a directory)\n+++ b/").append(path).append('\n');
            }
            for (String n : names) {
                diff(aDir ? host : -1, bDir ? held : -1, Fid.child(path, n), aDir, bDir, out);
            }
            return;
        }
        fileDiff(host, a, held, b, path, out);
    }

    private static void diff(int host, int held, String path, boolean hostSide, boolean heldSide, StringBuilder out)
            throws ErrnoException {
        if (hostSide && heldSide) {
            diff(host, held, path, out);
            return;
        }
        LinuxFs.Stat a = hostSide ? TreeCopy.statOrNull(host, path) : null;
        LinuxFs.Stat b = heldSide ? TreeCopy.statOrNull(held, path) : null;
        if ((a != null && a.isDir()) || (b != null && b.isDir())) {
            int root = a != null ? host : held;
            for (String n : TreeCopy.names(root, path)) {
                diff(host, held, Fid.child(path, n), hostSide, heldSide, out);
            }
            return;
        }
        fileDiff(host, a, held, b, path, out);
    }

    private static void fileDiff(int host, LinuxFs.Stat a, int held, LinuxFs.Stat b, String path, StringBuilder out)
            throws ErrnoException {
        String left = a == null ? "/dev/null" : "a/" + path;
        String right = b == null ? "/dev/null" : "b/" + path;
        if (a != null && a.isSymlink() || b != null && b.isSymlink()) {
            String ta = a == null ? null : a.isSymlink() ? "-> " + TreeCopy.readlink(host, path) : "(a file)";
            String tb = b == null ? null : b.isSymlink() ? "-> " + TreeCopy.readlink(held, path) : "(a file)";
            if (ta != null && ta.equals(tb)) {
                return;
            }
            out.append("--- ").append(left).append("\n+++ ").append(right).append('\n');
            if (ta != null) {
                out.append("-").append(ta).append('\n');
            }
            if (tb != null) {
                out.append("+").append(tb).append(" (symlink)\n");
            }
            return;
        }
        byte[] x = a == null ? new byte[0] : TreeCopy.read(host, path, MAX_TEXT + 1);
        byte[] y = b == null ? new byte[0] : TreeCopy.read(held, path, MAX_TEXT + 1);
        String modeNote = "";
        if (a != null && b != null && (a.mode() & 07777) != (b.mode() & 07777)) {
            modeNote = "old mode " + Integer.toOctalString(a.mode() & 07777) + "\nnew mode "
                    + Integer.toOctalString(b.mode() & 07777) + "\n";
        } else if (a == null && b != null) {
            modeNote = "new file mode " + Integer.toOctalString(b.mode() & 07777) + "\n";
        }
        if (a != null && b != null && java.util.Arrays.equals(x, y) && modeNote.isEmpty()) {
            return;
        }
        out.append("--- ").append(left).append("\n+++ ").append(right).append('\n').append(modeNote);
        UnifiedDiff.Hunks h = text(x) && text(y) ? UnifiedDiff.of(x, y) : null;
        if (h == null) {
            out.append("binary or large: ").append(a == null ? 0 : a.size()).append(" -> ")
                    .append(b == null ? 0 : b.size()).append(" bytes\n");
            return;
        }
        out.append(h.text());
    }

    private static boolean text(byte[] b) {
        if (b == null || b.length > MAX_TEXT) {
            return false;
        }
        for (byte c : b) {
            if (c == 0) {
                return false;
            }
        }
        return true;
    }
}
