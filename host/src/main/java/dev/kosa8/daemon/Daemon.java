package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.NettyTransport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * kosa8d: one per user. Serves the REST API on a unix socket (mode 0600, in a
 * 0700 directory) and owns the user's sandboxes. A file lock makes sure only
 * one daemon serves a runtime directory.
 */
public final class Daemon {
    public static final String VERSION = "0.1.0";

    private final HostPaths paths;
    private final SandboxManager sandboxes;
    private final String build;
    private final PrintStream logOut;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private EventLoopGroup group;
    private Channel server;
    private FileChannel lockFile;
    /**
     * Whether this daemon took the runtime directory's lock: only then are the socket and the lock its own to
     * give up. A daemon started beside a running one (two CLIs starting one at once) exits through the same
     * {@link #stop}, and once removed the running one's socket, leaving it unreachable and every later start
     * refused by its lock.
     */
    private volatile boolean locked;
    private final E2bService e2b;

    public Daemon(HostPaths paths, SandboxManager sandboxes, String build, PrintStream logOut) {
        this.paths = paths;
        this.sandboxes = sandboxes;
        this.build = build;
        this.logOut = logOut;
        this.e2b = new E2bService(sandboxes, HostPaths.config(), this::log);
    }

    public void start() throws InterruptedException {
        HostPaths.privateDirectory(paths.runtime());
        lock();
        sandboxes.loadRecords();
        Path socket = paths.daemonSocket();
        try {
            Files.deleteIfExists(socket);
            // a daemon killed outright left its build named; until this one names its own, none is
            Files.deleteIfExists(paths.daemonBuild());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "cannot remove the stale socket " + socket, "", e);
        }
        group = new MultiThreadIoEventLoopGroup(1, NettyTransport.CURRENT.ioHandler());
        server = new ServerBootstrap()
                .group(group)
                .channel(NettyTransport.CURRENT.serverDomainSocket())
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(8192, 16384, 65536));
                        ch.pipeline().addLast(new HttpObjectAggregator(1 << 20));
                        ch.pipeline().addLast(new ApiHandler(Daemon.this));
                    }
                })
                .bind(NettyTransport.CURRENT.domainAddress(socket))
                .sync()
                .channel();
        try {
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "cannot restrict the socket's mode", "", e);
        }
        writeBuild();
        log("kosa8d " + VERSION + " (" + build + ") listening on " + socket + ", pid " + ProcessHandle.current().pid());
        // after listening: a CLI waiting for this daemon finds it up at once; requests for a sandbox wait for its own
        sandboxes.reattachMachines();
        e2b.restore();
        HeapTrim.start(this::log);
    }

    /** Names this daemon's build beside its socket ({@link HostPaths#daemonBuild()}), whole or not at all. */
    private void writeBuild() {
        Path file = paths.daemonBuild();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, build + "\n");
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // the CLI then asks GET /v1/version, as before the file
            log("cannot write " + file + ": " + e.getMessage());
            try {
                Files.deleteIfExists(file);
            } catch (IOException again) {
                log("cannot remove " + file + " either: " + again.getMessage());
            }
        }
    }

    private void lock() {
        Path lock = paths.runtime().resolve("kosa8d.lock");
        try {
            lockFile = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l = lockFile.tryLock();
            if (l == null) {
                throw new KosaException(KosaException.Kind.DAEMON, "another kosa8d already serves " + paths.runtime(),
                        "use it, or stop it with `kosa8 daemon stop`");
            }
            locked = true;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "cannot lock " + lock + ": " + e.getMessage(), "", e);
        }
    }

    public void awaitStop() throws InterruptedException {
        stopped.await();
    }

    /** Stops serving; running sandboxes keep running for the next daemon to re-attach. */
    public void stop() {
        if (stopped.getCount() == 0) {
            return;
        }
        if (!locked) {
            stopped.countDown(); // never served: nothing here is this daemon's
            return;
        }
        log("stopping; running sandboxes stay up for the next daemon");
        e2b.close();
        sandboxes.detachAll();
        // bounded waits: a daemon asked to stop must stop, whatever state Netty is in
        if (server != null) {
            server.close().awaitUninterruptibly(2000);
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3000);
        }
        try {
            Files.deleteIfExists(paths.daemonBuild());
            Files.deleteIfExists(paths.daemonSocket());
            if (lockFile != null) {
                lockFile.close();
            }
        } catch (IOException ignored) {
            // nothing more to clean
        }
        stopped.countDown();
    }

    void shutdownSoon() {
        Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException ignored) {
                // stopping anyway
            }
            stop();
        });
    }

    SandboxManager sandboxes() {
        return sandboxes;
    }

    /** The E2B listener (docs/e2b.md). */
    E2bService e2b() {
        return e2b;
    }

    HostPaths paths() {
        return paths;
    }

    String build() {
        return build;
    }

    synchronized void log(String line) {
        logOut.println(Instant.now() + " " + line);
        logOut.flush();
    }
}
