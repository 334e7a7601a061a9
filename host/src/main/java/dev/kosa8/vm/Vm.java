package dev.kosa8.vm;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A running sandbox machine: its QEMU process, the QMP connection that
 * controls it and the connection to the agent inside. Closing it stops QEMU.
 */
public final class Vm implements AutoCloseable {
    private final VmSpec spec;
    private final QemuProcess qemu;
    private final QmpClient qmp;
    private final AgentConnection agent;
    /** The guest's console going into its log; null for a QEMU from before the console was a socket. */
    private final ConsolePump console;
    /** A lazy load still sending RAM ({@link Postcopy}), or null. */
    private final Postcopy.Loading loading;
    /** For a restored machine: from the guest running to its processes thawed; else 0. */
    private final long wakeMillis;
    /** How long a restored guest may take to answer its Hello and thaw. */
    static final Duration WAKE = Duration.ofSeconds(30);
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    private Vm(VmSpec spec, QemuProcess qemu, QmpClient qmp, AgentConnection agent, ConsolePump console) {
        this(spec, qemu, qmp, agent, console, null, 0);
    }

    private Vm(VmSpec spec, QemuProcess qemu, QmpClient qmp, AgentConnection agent, ConsolePump console,
               Postcopy.Loading loading, long wakeMillis) {
        this.spec = spec;
        this.qemu = qemu;
        this.qmp = qmp;
        this.agent = agent;
        this.console = console;
        this.loading = loading;
        this.wakeMillis = wakeMillis;
    }

    /**
     * Starts QEMU and waits until the agent inside has answered. On any
     * failure QEMU is killed and the error carries QEMU's own output and the
     * tail of the guest's console.
     */
    public static Vm boot(VmSpec spec, String qemuBinary, Duration bootTimeout) {
        return boot(spec, qemuBinary, bootTimeout, q -> { });
    }

    /**
     * As {@link #boot(VmSpec, String, Duration)}, telling {@code started} about
     * the QEMU process as soon as it runs, before the long wait for the agent,
     * so the caller can record it: a daemon that dies mid-boot must leave
     * enough behind for the next one to find and stop that QEMU.
     */
    public static Vm boot(VmSpec spec, String qemuBinary, Duration bootTimeout,
                          java.util.function.Consumer<QemuProcess> started) {
        return boot(spec, QemuCommandLine.of(spec, qemuBinary), bootTimeout, started);
    }

    /**
     * Boots a machine from an argv built elsewhere: {@link QemuCommandLine#of}
     * plus devices of the caller's (the workspace benchmark adds QEMU's own
     * virtio-9p beside kosa8's to compare them in one guest).
     */
    public static Vm boot(VmSpec spec, List<String> argv, Duration bootTimeout,
                          java.util.function.Consumer<QemuProcess> started) {
        // stopped until the console is read, so the log has the boot from its first line
        List<String> stopped = new java.util.ArrayList<>(argv);
        stopped.add("-S");
        MachineMemory.fresh(spec);
        QemuProcess qemu = startQemu(spec, stopped, true, started);
        QmpClient qmp = null;
        ConsolePump console = null;
        try {
            qmp = QmpClient.connect(spec.qmpSocket(), Duration.ofSeconds(30), e -> { });
            console = ConsolePump.start(spec, Duration.ofSeconds(30), null);
            qmp.execute("cont", Map.of(), Duration.ofSeconds(30));
            BootWatch watch = new BootWatch(spec.consoleLog());
            AgentConnection agent = AgentConnection.connect(spec.agentSocket(), bootTimeout,
                    () -> qemu.isAlive() && !watch.guestFailed());
            return new Vm(spec, qemu, qmp, agent, console);
        } catch (IOException | RuntimeException e) {
            String how = stop(qemu, qmp);
            if (console != null) {
                console.close();
            }
            throw new KosaException(KosaException.Kind.VM,
                    "the sandbox did not start: " + e.getMessage() + "; QEMU " + how
                            + section("QEMU said", qemu.outputTail(10))
                            + section("guest console (last lines)", ConsoleLog.tail(spec.consoleLog(), 20)),
                    "the whole console log is at " + spec.consoleLog()
                            + "; if the image is damaged, rebuild it with `kosa8 image build --force`", e);
        }
    }

    /**
     * Starts a machine from a saved state instead of booting it: QEMU starts
     * stopped and waiting for a migration stream ({@code -S -incoming
     * defer}), loads {@code state}, lets {@code beforeRun} connect what must
     * be there before the guest runs (the workspace server), continues the
     * machine and connects to the agent, which takes the new host's Hello as
     * a new session. The guest runs on from the instant the state was saved,
     * and its processes, frozen by the agent before every save, are thawed
     * with the clock set to now and the random generator reseeded; the thaw
     * goes out with the Hello, so the guest, slow to run its first steps
     * after a restore (under TCG every code path is translated again),
     * answers both in one go.
     *
     * <p>A state kept as pages ({@link PagedMachine}) loads lazily where the
     * host allows it ({@link Postcopy}): the machine runs once its devices
     * are in, and its RAM arrives as the guest touches it and behind, so a
     * restore no longer waits for all of RAM ({@link #awaitLoaded}). When
     * QEMU refuses that before anything ran, a fresh QEMU loads the state
     * whole ({@link MachineState#load}), as it does any other state.
     */
    public static Vm restore(VmSpec spec, List<String> argv, SavedMachine state, Duration timeout,
                             java.util.function.Consumer<QemuProcess> started,
                             java.util.function.Consumer<QmpClient> beforeRun,
                             java.util.function.Consumer<String> log) {
        return restore(null, spec, argv, state, timeout, started, beforeRun, log);
    }

    /**
     * As {@link #restore(VmSpec, List, SavedMachine, Duration, java.util.function.Consumer,
     * java.util.function.Consumer, java.util.function.Consumer)}, into {@code standby}, a QEMU started
     * earlier for this machine, when it still runs and was started with this argv (all of it but the kernel's
     * command line, which a restore does not read: {@link Standby#forRestore}): the new process's start and
     * the wait for its monitor are then off the restore's path. Otherwise (null, ended, or started
     * for another argv: the image changed meanwhile) the standby is stopped and a fresh QEMU started, as
     * always. Either way the standby is used up.
     */
    public static Vm restore(Standby standby, VmSpec spec, List<String> argv, SavedMachine state, Duration timeout,
                             java.util.function.Consumer<QemuProcess> started,
                             java.util.function.Consumer<QmpClient> beforeRun,
                             java.util.function.Consumer<String> log) {
        List<String> incoming = incoming(argv);
        QemuProcess qemu;
        QmpClient qmp = null;
        // a machine whose RAM is a file maps it when it starts: a standby started earlier maps the file as it was
        boolean fromStandby = standby != null && standby.fits(incoming) && spec.memoryFile() == null;
        if (state instanceof FileRamMachine && spec.memoryFile() == null) {
            if (standby != null) {
                standby.close(); // used up either way, as the javadoc says
            }
            throw new KosaException(KosaException.Kind.VM, "cannot restore " + state.name() + ": its RAM was saved"
                    + " as a file and this machine keeps its RAM in QEMU's own memory",
                    "restart the daemon with the checkpoint mode the state was saved in (KOSA8_CHECKPOINT_MODE, "
                            + "docs/checkpoints.md)");
        }
        if (fromStandby) {
            qemu = standby.process();
            qmp = standby.qmp();
        } else {
            if (standby != null) {
                log.accept("standby QEMU not used (" + (spec.memoryFile() != null ? "its RAM is a file it mapped"
                        + " when it started" : standby.unfit(incoming)) + "); starting a fresh one");
                standby.close();
            }
            MachineMemory.forRestore(spec, state);
            // the console log goes on: the restored guest's earlier lines are part of its story
            qemu = startQemu(spec, incoming, false, started);
        }
        Postcopy.Loading loading = null;
        ConsolePump console = null;
        try {
            if (fromStandby) {
                started.accept(qemu); // inside: a failure to record it stops it, as for a QEMU started here
            } else {
                qmp = QmpClient.connect(spec.qmpSocket(), Duration.ofSeconds(30), e -> { });
            }
            console = ConsolePump.start(spec, Duration.ofSeconds(30), null);
            Path socket = spec.qmpSocket().resolveSibling("incoming.sock");
            PagedMachine.Pages pages = null;
            // a lazy load needs userfaultfd on QEMU's RAM, which it cannot have on a file (only on anonymous or shmem)
            if (state instanceof PagedMachine paged && Postcopy.supported() && spec.memoryFile() == null) {
                try {
                    pages = paged.openPages();
                } catch (IOException e) {
                    // nothing was sent yet: this QEMU loads the state whole, which reports what is wrong with it
                    log.accept("lazy load of " + state.name() + " not possible (" + e.getMessage() + "); loading it"
                            + " whole");
                }
            }
            if (pages != null) {
                try {
                    QemuProcess q = qemu;
                    loading = Postcopy.start(qmp, socket, state.name(), pages, timeout, q::kill, log);
                } catch (Postcopy.Refused e) {
                    log.accept("lazy load of " + state.name() + " refused (" + e.getMessage()
                            + "); loading it whole in a fresh QEMU");
                    stop(qemu, qmp);
                    console.close();
                    console = null;
                    qmp = null;
                    MachineMemory.fresh(spec);
                    qemu = startQemu(spec, incoming, false, started);
                    qmp = QmpClient.connect(spec.qmpSocket(), Duration.ofSeconds(30), x -> { });
                    console = ConsolePump.start(spec, Duration.ofSeconds(30), null);
                    MachineState.load(qmp, socket, state, timeout);
                }
            } else {
                MachineState.load(qmp, socket, state, timeout);
            }
            beforeRun.accept(qmp);
            // every saved machine was frozen by the agent before it was saved: its processes are thawed with the
            // clock set to now and the random generator reseeded with fresh host bytes (the same RAM restored twice
            // must not draw the same numbers), the request sent in one go with the Hello. The connection is made
            // before the machine runs, so that the guest finds its host as it was when the state was saved
            // (AgentConnection.open): its agent reads the Hello as a new host taking over, with no end of session
            // and no polling of the port in between.
            byte[] seed = new byte[64];
            RANDOM.nextBytes(seed);
            GuestCommand.Pending[] thaw = new GuestCommand.Pending[1];
            AgentConnection agent = AgentConnection.open(spec.agentSocket(), timeout, qemu::isAlive,
                    c -> thaw[0] = GuestCommand.thawLater(c, System.currentTimeMillis(), seed));
            long running;
            long answered;
            boolean traced = WakeTrace.start(qmp, state.name(), timeout);
            try {
                qmp.execute("cont", Map.of(), timeout);
                running = System.nanoTime();
                agent.awaitHello(timeout, qemu::isAlive);
                answered = System.nanoTime();
                thaw[0].await(WAKE, "the guest did not thaw");
            } catch (RuntimeException e) {
                agent.close();
                throw e;
            }
            long end = System.nanoTime();
            WakeTrace.stop(qmp, traced, timeout);
            log.accept("guest of " + state.name() + " woke: its agent's Hello " + (answered - running) / 1_000_000
                    + " ms after the machine ran, the thaw's answer " + (end - answered) / 1_000_000 + " ms after that");
            return new Vm(spec, qemu, qmp, agent, console, loading, (end - running) / 1_000_000);
        } catch (IOException | RuntimeException e) {
            if (loading != null) {
                loading.abort();
            }
            String how = stop(qemu, qmp);
            if (console != null) {
                console.close();
            }
            throw new KosaException(KosaException.Kind.VM, "the sandbox could not be restored from "
                    + state.name() + ": " + e.getMessage() + "; QEMU " + how
                    + section("QEMU said", qemu.outputTail(10)),
                    "the saved state is kept; see " + qemuLog(spec), e);
        }
    }

    /** For a machine restored from a saved state: how long its guest took to answer and thaw its processes. */
    public long wakeMillis() {
        return wakeMillis;
    }

    /**
     * Tells a machine restored lazily that the restore's own steps are done,
     * so that the rest of its RAM may follow ({@link Postcopy.Loading#sweep});
     * nothing for any other.
     */
    public void loadRest() {
        if (loading != null) {
            loading.sweep();
        }
    }

    /**
     * Waits until all of the machine's RAM is in place, for a machine
     * restored lazily ({@link #restore}); returns at once for any other.
     * Whatever saves the machine, or leaves it to run without the daemon,
     * waits for this first: QEMU cannot save a machine it is still loading.
     */
    public void awaitLoaded(Duration timeout) throws IOException {
        if (loading != null) {
            loading.await(timeout);
        }
    }

    /** A machine's argv for a QEMU that waits, stopped, for a saved state to load. */
    static List<String> incoming(List<String> argv) {
        List<String> incoming = new java.util.ArrayList<>(argv);
        incoming.addAll(List.of("-S", "-incoming", "defer"));
        return List.copyOf(incoming);
    }

    /**
     * Starts QEMU with {@code argv} after removing sockets (and, for a boot,
     * the console log) a previous QEMU of this sandbox left, and tells
     * {@code started} about the process at once. If {@code started} fails
     * (the pid cannot be recorded), the process is stopped before the failure
     * goes on: nothing may run that no one knows of.
     */
    static QemuProcess startQemu(VmSpec spec, List<String> argv, boolean freshConsole,
                                         java.util.function.Consumer<QemuProcess> started) {
        List<String> command = jailed(spec, argv);
        try {
            Files.deleteIfExists(spec.qmpSocket());
            Files.deleteIfExists(spec.agentSocket());
            if (spec.netSocket() != null) {
                Files.deleteIfExists(spec.netSocket());
                freshWindow(spec.netWindow(), NetLink.WINDOW_BYTES);
            }
            if (spec.workspaceSocket() != null) {
                Files.deleteIfExists(spec.workspaceSocket());
                freshWindow(spec.workspaceWindow(), VmSpec.WORKSPACE_WINDOW_BYTES);
                freshWindow(spec.workspaceWrites(), VmSpec.WORKSPACE_WRITES_BYTES);
            }
            Files.deleteIfExists(spec.consoleSocket());
            if (spec.memoryFile() != null && !Files.exists(spec.memoryFile())) {
                RamFile.fresh(spec.memoryFile()); // the jail binds the file itself, so it must be there
            }
            if (freshConsole) {
                Files.deleteIfExists(spec.consoleLog());
                Files.deleteIfExists(ConsoleLog.older(spec.consoleLog()));
            }
            QemuProcess qemu = QemuProcess.start(command, qemuLog(spec), spec.jail().confines());
            try {
                started.accept(qemu);
            } catch (RuntimeException e) {
                qemu.kill();
                throw e;
            }
            return qemu;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot start QEMU (" + argv.getFirst() + "): "
                    + e.getMessage(), "install it: apt-get install " + (spec.arch() == GuestArch.ARM64 ? "qemu-system-arm"
                    : "qemu-system-x86") + " (kosa8 doctor checks everything)", e);
        }
    }

    /**
     * {@code argv} as it runs in {@code spec}'s jail ({@link Jail#wrap}),
     * which shows QEMU the files its root disk rests on, read from the disk
     * as it is now: what every QEMU is started as, and what a test runs a
     * probe in QEMU's place as.
     */
    public static List<String> jailed(VmSpec spec, List<String> argv) {
        if (!spec.jail().confines()) {
            return spec.jail().wrap(spec, List.of(), argv); // the argv itself, or the refusal of a required jail
        }
        try {
            return spec.jail().wrap(spec, DiskChain.backingFiles(spec.rootDisk()), hiddenFrom(spec), argv);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot read what the sandbox's disk rests on: "
                    + e.getMessage(), "the disk " + spec.rootDisk() + " may be damaged; see " + qemuLog(spec), e);
        }
    }

    /**
     * The folders inside this machine's runtime folder that are not its own
     * (the other machine folder of its sandbox, where a standby or the next
     * rewind's QEMU keeps its sockets, the broker's, whose sockets the daemon
     * alone connects to), which its jail covers.
     */
    static List<Path> hiddenFrom(VmSpec spec) throws IOException {
        Path own = spec.qmpSocket().getParent();
        List<Path> hidden = new java.util.ArrayList<>();
        try (var entries = Files.list(own)) {
            for (Path p : entries.toList()) {
                if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    hidden.add(p);
                }
            }
        }
        return hidden;
    }

    /**
     * A new, empty window file for the workspace, read or write (a new inode:
     * an old QEMU still closing keeps its own), readable and writable by the
     * daemon's user only; sparse, so it costs what is written to it.
     */
    private static void freshWindow(Path window, long bytes) {
        try {
            Files.deleteIfExists(window);
            try (FileChannel f = FileChannel.open(window, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rw-------")))) {
                f.write(ByteBuffer.allocate(1), bytes - 1);
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot make the window file " + window
                    + ": " + e.getMessage(), "check the free space and permissions of " + window.getParent(), e);
        }
    }

    /** Kills a QEMU that failed to come up; says how it ended, for the error. */
    static String stop(QemuProcess qemu, QmpClient qmp) {
        if (qmp != null) {
            qmp.close();
        }
        boolean wasAlive = qemu.isAlive();
        qemu.kill();
        return wasAlive ? "was stopped by kosa8" : "ended with " + qemu.exitDescription();
    }

    static java.nio.file.Path qemuLog(VmSpec spec) {
        return spec.consoleLog().resolveSibling("qemu.log");
    }

    /** Re-attaches to a QEMU that a previous daemon started, if it still runs. */
    public static Vm reattach(VmSpec spec, long pid, Instant started, Duration timeout) {
        QemuProcess qemu = QemuProcess.attach(pid, started, qemuLog(spec))
                .orElseThrow(() -> new KosaException(KosaException.Kind.VM,
                        "the sandbox's QEMU (pid " + pid + ") is no longer running", "remove it with `kosa8 rm`"));
        try {
            QmpClient qmp = QmpClient.connect(spec.qmpSocket(), timeout, e -> { });
            // a daemon that died in the middle of a checkpoint or rewind left the machine stopped: run it on, or
            // its agent could never answer
            String migration = qmp.execute("query-migrate", java.util.Map.of(), timeout).path("status").asText("");
            if (migration.startsWith("postcopy")) {
                // the daemon that was sending its RAM is gone: the guest waits for pages that never come
                qemu.kill();
                throw new IOException("the machine was still being restored when the daemon stopped, and part of"
                        + " its RAM never arrived");
            }
            String status = qmp.execute("query-status", java.util.Map.of(), timeout).path("status").asText();
            // paused: stopped for a checkpoint's devices or a stop's save; postmigrate: a stop's save written out
            // whole before the daemon died (cont takes the disk back from the migration, as after a cancelled one)
            if (status.equals("paused") || status.equals("postmigrate")) {
                qmp.execute("cont", java.util.Map.of(), timeout);
                StalePorts.close(spec);
            }
            AgentConnection agent = AgentConnection.connect(spec.agentSocket(), timeout, qemu::isAlive);
            // a QEMU from before the console was a socket writes its file itself
            ConsolePump console = Files.exists(spec.consoleSocket()) ? ConsolePump.start(spec, timeout,
                    "a daemon re-attached; what the guest wrote on its console while no daemon read it was not kept")
                    : null;
            return new Vm(spec, qemu, qmp, agent, console);
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM,
                    "cannot re-attach to the sandbox's QEMU (pid " + pid + "): " + e.getMessage(),
                    "remove it with `kosa8 rm -f`", e);
        }
    }

    static String section(String title, String body) {
        return body.isBlank() ? "" : "\n--- " + title + " ---\n" + body;
    }

    public VmSpec spec() {
        return spec;
    }

    public AgentConnection agent() {
        return agent;
    }

    public QmpClient qmp() {
        return qmp;
    }

    public QemuProcess process() {
        return qemu;
    }

    public boolean isAlive() {
        return qemu.isAlive();
    }

    /**
     * Stops the machine: flushes the guest's file systems through the agent
     * when it answers, then QMP {@code quit}; kills QEMU if it lingers.
     */
    public void shutdown(Duration grace) {
        try {
            if (agent.isOpen()) {
                GuestCommand.run(agent, List.of("sync"), grace);
            }
        } catch (RuntimeException e) {
            // an unresponsive guest is stopped anyway
        }
        quit(grace);
    }

    /**
     * Ends QEMU without asking the guest anything (its state is about to be
     * replaced, and a frozen guest could not answer): QMP {@code quit}, which
     * lets QEMU close the disk image cleanly, then SIGKILL if it lingers.
     */
    public void quit(Duration grace) {
        askToQuit();
        if (!qemu.waitFor(grace)) {
            qemu.kill();
        }
        closeConnections();
    }

    /**
     * Ends QEMU for a machine about to be replaced (a rewind), returning as
     * soon as QEMU has let go of its files rather than once its process is
     * gone: QMP {@code quit}, then a wait until QEMU closed the QMP connection
     * and removed its listening sockets. QEMU's cleanup closes the disk image
     * (releasing its lock) before the monitor and the character devices, and
     * removing a listening socket is the last thing it does to each, so then
     * a fresh QEMU can open the same disk and bind the same paths without the
     * old one taking them from it. What is left is the kernel freeing the old
     * process's memory: 30-100 ms for a QEMU that was itself restored lazily
     * (its RAM in small pages), which now runs beside the next steps. The
     * process is reaped by whoever watches it. Falls back to {@link #quit}'s
     * wait, and SIGKILL, when QEMU does not get there within {@code grace}.
     */
    public void quitReleasing(Duration grace) {
        qemu.lowerPriority(); // its end runs beside the new machine's first steps: let those have the cores
        askToQuit();
        List<Path> sockets = new java.util.ArrayList<>(List.of(spec.qmpSocket(), spec.agentSocket()));
        if (spec.workspaceSocket() != null) {
            sockets.add(spec.workspaceSocket());
        }
        long deadline = System.nanoTime() + grace.toNanos();
        boolean released = false;
        while (qemu.isAlive() && System.nanoTime() < deadline) {
            if (qmp.closedFuture().isDone() && sockets.stream().noneMatch(java.nio.file.Files::exists)) {
                released = true;
                break;
            }
            qemu.waitFor(Duration.ofMillis(1));
        }
        if (!released && !qemu.waitFor(Duration.ZERO)) {
            qemu.kill();
        }
        closeConnections();
    }

    /** The start of every quit: the load and the commands under way end, and QEMU is asked to quit. */
    private void askToQuit() {
        abandonLoad();
        agent.failOpenChannels(Message.ErrorCode.INTERNAL, "the sandbox's machine stopped");
        try {
            qmp.execute("quit", Map.of(), Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            // QEMU may close the connection before it answers
        }
    }

    private void closeConnections() {
        agent.close();
        qmp.close();
        if (console != null) {
            console.close();
        }
    }

    /** Kills QEMU at once. */
    public void kill() {
        abandonLoad();
        qemu.kill();
        closeConnections();
    }

    /**
     * Leaves QEMU running and drops the connections (the daemon is going
     * away), once a lazy load has put all of RAM in place: without the
     * daemon the rest would never come.
     */
    public void detach() {
        try {
            awaitLoaded(Duration.ofMinutes(2));
        } catch (IOException e) {
            // the machine is left as it is; the next daemon finds out whether it runs
        }
        if (console != null) {
            console.close("the daemon stopped; the guest runs on, and what it writes on its console is not kept"
                    + " until a daemon re-attaches");
        }
        closeConnections();
    }

    /** The machine is being ended: a lazy load stops sending, without calling that a failure. */
    private void abandonLoad() {
        if (loading != null && !loading.isDone()) {
            loading.abort();
        }
    }

    @Override
    public void close() {
        shutdown(Duration.ofSeconds(10));
    }
}
