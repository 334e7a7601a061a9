package dev.kosa8.workspace;

/**
 * A failed system call and its errno. The 9P2000.L server sends the errno to
 * the guest unchanged ({@code Rlerror}), so the number is the payload and the
 * message is for logs only. Thrown on hot paths (every missing file a guest
 * looks up), so it carries no stack trace.
 */
final class ErrnoException extends Exception {
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int EIO = 5;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int EACCES = 13;
    static final int EEXIST = 17;
    static final int EXDEV = 18;
    static final int ENOTDIR = 20;
    static final int EISDIR = 21;
    static final int EINVAL = 22;
    static final int EMFILE = 24;
    static final int ENOSPC = 28;
    static final int ERANGE = 34;
    static final int ENAMETOOLONG = 36;
    static final int ENOSYS = 38;
    static final int ENOTEMPTY = 39;
    static final int ELOOP = 40;
    static final int ENODATA = 61;
    static final int EPROTO = 71;
    static final int EBADMSG = 74;
    static final int EOVERFLOW = 75;
    static final int EOPNOTSUPP = 95;
    static final int EBUSY = 16;
    static final int ESTALE = 116;

    /** The Linux errno, as the guest will receive it. */
    final int errno;

    ErrnoException(int errno, String call) {
        super(call + ": " + describe(errno) + " (errno " + errno + ")", null, false, false);
        this.errno = errno;
    }

    /** A short English name for the common errnos, as strerror(3) words them. */
    static String describe(int errno) {
        return switch (errno) {
            case EPERM -> "Operation not permitted";
            case ENOENT -> "No such file or directory";
            case EINTR -> "Interrupted system call";
            case EIO -> "Input/output error";
            case EBADF -> "Bad file descriptor";
            case EAGAIN -> "Resource temporarily unavailable";
            case EACCES -> "Permission denied";
            case EEXIST -> "File exists";
            case EXDEV -> "Invalid cross-device link";
            case ENOTDIR -> "Not a directory";
            case EISDIR -> "Is a directory";
            case EINVAL -> "Invalid argument";
            case EMFILE -> "Too many open files";
            case ENOSPC -> "No space left on device";
            case ERANGE -> "Numerical result out of range";
            case ENAMETOOLONG -> "File name too long";
            case ENOSYS -> "Function not implemented";
            case ENOTEMPTY -> "Directory not empty";
            case ELOOP -> "Too many levels of symbolic links";
            case ENODATA -> "No data available";
            case EPROTO -> "Protocol error";
            case EBADMSG -> "Bad message";
            case EOVERFLOW -> "Value too large for defined data type";
            case EOPNOTSUPP -> "Operation not supported";
            default -> "Unknown error";
        };
    }
}
