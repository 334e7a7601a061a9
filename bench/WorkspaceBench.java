/*
 * Workspace benchmark (issue 3): kosa8's shared folder against QEMU's own
 * virtio-9p, side by side in ONE guest booted once. Two host folders hold the
 * same content; the guest mounts
 *   - /mnt/virtfs: QEMU's built-in virtio-9p (fsdev local) — the baseline: fast, but it blocks snapshots;
 *   - /workspace:  kosa8's 9P2000.L server over the workspace's virtio-serial port (the guest kernel's own
 *                  transport, trans=kosa8, where the image has kosa8's module, else trans=fd on the agent's
 *                  relay; → virtio-serial → QEMU chardev → host unix socket → WorkspaceServer),
 * with the same 9p options (version, msize, access, cache, nosuid/nodev). Each workload runs on both
 * mounts in every round, the order alternating (baseline first in odd rounds, kosa8 first in even
 * ones); it is timed inside the guest, so neither the host JVM nor the exec round trip is in a figure;
 * the median of the rounds is quoted. Ratio = baseline time / kosa8 time: 1.00 is parity, 0.50 means
 * kosa8 takes twice as long.
 *
 *   java --enable-native-access=ALL-UNNAMED -cp host/target/kosa8.jar bench/WorkspaceBench.java \
 *       [--rounds 3] [--size-mib 1024] [--files 10000] [--tree DIR] [--dir PARENT] [--accel auto|tcg|kvm]
 *       [--cpus 2] [--memory-mib 1024] [--msize 1048600] [--profile] [--workspace-transport auto|relay]
 *
 * --tree: the source tree extracted by the `tar x` row (default: the java.base sources from this JDK's
 * lib/src.zip). --dir: where the two host folders live (default: the temporary directory). --msize: asked
 * of both mounts (default kosa8's 1 MiB; Linux 6.1's virtio transport clamps it to 512000, so 512000 gives
 * both sides the same message size). --workspace-transport: as `kosa8 create`'s (relay: the agent's relay
 * even where the image has the kernel module). --no-hold: kosa8's server holds no paths (docs/workspace.md,
 * "What can reach the host"); by default it holds the default classes, as a sandbox does, in a held layer
 * of its own. The holding's cost is a run with it against a run without, each against virtio-9p.
 * --profile: adds dd rows with bs=64k and, for every workload, the CPU time and read/write system calls
 * of each thread on the way, from /proc (QEMU's threads, named with debug-threads=on, and this JVM's
 * server threads on the host; every guest thread, the agent's relay among them). Its numbers are for
 * finding where the time goes; quote the timings of a run without it. bench/workspace.sh wraps this program.
 * Writes its result under bench/results/ (bench/BenchResult.java): each row's kosa8 time against virtio-9p's.
 */
import dev.kosa8.host.HostPaths;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageBuilder;
import dev.kosa8.vm.WorkspaceTransport;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.AgentConnection;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.Tail;
import dev.kosa8.vm.TscFrequency;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import dev.kosa8.workspace.HeldChanges;
import dev.kosa8.workspace.WorkspaceServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

public class WorkspaceBench {
    static final String BASE = "/mnt/virtfs";
    static final String KOSA = "/workspace";

    record Options(int rounds, int sizeMib, int files, Path tree, Path dir, String accel, int cpus, int memoryMib,
                   int msize, boolean profile, WorkspaceTransport transport, boolean hold) {
        /** 9p options of both mounts: kosa8's agent mounts with exactly these (WorkspaceMount), plus nosuid,nodev. */
        String mountOptions() {
            return "version=9p2000.L,msize=" + msize + ",access=client,cache=mmap";
        }
    }

    /** One mount: its label, where the guest sees it, the host folder behind it. */
    record Side(String label, String guestDir, Path hostDir) {
    }

    /** A timed row: the guest-side key, its label, and the bytes moved (0: no MiB/s column). */
    record Row(String key, String label, long bytes) {
    }

    /** Time on a CPU (ns, from schedstat) and read/write system call counters of a thread, or of threads of one name. */
    record Usage(long cpuNs, long rchar, long wchar, long syscr, long syscw) {
        Usage plus(Usage o) {
            return new Usage(cpuNs + o.cpuNs, rchar + o.rchar, wchar + o.wchar, syscr + o.syscr, syscw + o.syscw);
        }

        Usage minus(Usage o) {
            return new Usage(cpuNs - o.cpuNs, rchar - o.rchar, wchar - o.wchar, syscr - o.syscr, syscw - o.syscw);
        }
    }

    final Options o;
    final Path tmp;
    final AtomicBoolean cleaned = new AtomicBoolean();
    Path data;
    long treeFiles;
    Vm vm;
    WorkspaceServer server;
    VmSpec spec;
    List<String> qemuArgv;
    final Map<String, Map<String, List<Double>>> times = new LinkedHashMap<>(); // key -> side -> seconds
    final Map<String, Map<String, Usage>> profiles = new TreeMap<>();            // "key side" -> thread -> usage
    final Map<String, Map<String, Usage>> hostBegin = new java.util.concurrent.ConcurrentHashMap<>();

    WorkspaceBench(Options o, Path tmp) {
        this.o = o;
        this.tmp = tmp;
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = parse(args);
        } catch (RuntimeException e) {
            System.err.println("workspace benchmark: " + e.getMessage());
            System.exit(2);
            return;
        }
        Path tmp = Files.createTempDirectory("kosa8-wsbench-");
        WorkspaceBench b = new WorkspaceBench(o, tmp);
        Runtime.getRuntime().addShutdownHook(new Thread(b::cleanup)); // Ctrl-C too leaves no QEMU behind
        int status = 0;
        try {
            b.run();
        } catch (Exception e) {
            System.err.println("workspace benchmark failed: " + e.getMessage());
            if (b.spec != null) {
                System.err.println("--- guest console (last lines) ---\n" + Tail.of(b.spec.consoleLog(), 30));
            }
            if (b.vm != null) {
                System.err.println("--- QEMU said ---\n" + b.vm.process().outputTail(10));
            }
            status = 1;
        } finally {
            b.cleanup();
        }
        System.exit(status);
    }

    static Options parse(String[] args) {
        int rounds = 3;
        int size = 1024;
        int files = 10_000;
        Path tree = null;
        Path dir = Path.of(System.getProperty("java.io.tmpdir"));
        String accel = "auto";
        int cpus = 2;
        int mem = 1024;
        boolean profile = false;
        WorkspaceTransport transport = WorkspaceTransport.AUTO;
        int msize = WorkspaceServer.MSIZE;
        boolean hold = true;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--size-mib" -> size = Integer.parseInt(args[++i]);
                case "--files" -> files = Integer.parseInt(args[++i]);
                case "--tree" -> tree = Path.of(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--accel" -> accel = args[++i];
                case "--cpus" -> cpus = Integer.parseInt(args[++i]);
                case "--memory-mib" -> mem = Integer.parseInt(args[++i]);
                case "--msize" -> msize = Integer.parseInt(args[++i]);
                case "--profile" -> profile = true;
                case "--no-hold" -> hold = false;
                case "--workspace-transport" -> transport = WorkspaceTransport.parse(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + a
                        + " (see the comment at the top of bench/WorkspaceBench.java)");
            }
        }
        if (rounds < 1 || size < 1 || files < 1) {
            throw new IllegalArgumentException("rounds, size and files must be at least 1");
        }
        if (msize < 8192 || msize > WorkspaceServer.MSIZE) {
            throw new IllegalArgumentException("--msize must be between 8192 and " + WorkspaceServer.MSIZE);
        }
        return new Options(rounds, size, files, tree, dir, accel, cpus, mem, msize, profile, transport, hold);
    }

    // ---------------------------------------------------------------- the run

    void run() throws Exception {
        HostPaths paths = HostPaths.fromEnvironment();
        Image image = new ImageBuilder(paths, step -> System.err.println("  image: " + step.line())).ensure();
        String qemu = "qemu-system-x86_64";
        Accelerator accel = o.accel().equals("auto")
                ? new AcceleratorProbe(qemu, paths.cache().resolve("accelerator.json"), Duration.ofSeconds(10),
                        w -> System.err.println("warning: " + w)).choose(image.vmlinux(), image.initramfs()).accelerator()
                : Accelerator.parse(o.accel());

        data = Files.createTempDirectory(o.dir(), "kosa8-wsbench-data-");
        Side base = new Side("virtio-9p", BASE, Files.createDirectory(data.resolve("virtfs")));
        Side kosa = new Side("kosa8", KOSA, Files.createDirectory(data.resolve("kosa8")));
        Path stage = Files.createDirectory(tmp.resolve("stage"));

        log("staging on the host: a git checkout of " + o.files() + " files, and the source tree's tarball");
        Path repo = gitRepo(stage.resolve("repo"), o.files());
        for (Side s : List.of(base, kosa)) {
            host(List.of("cp", "-a", repo.toString(), s.hostDir().resolve("repo").toString()), Duration.ofMinutes(10));
        }
        Path tarball = stage.resolve("src.tar");
        String treeDesc = sourceTarball(stage, tarball);
        Files.copy(tarball, base.hostDir().resolve("src.tar"));

        Path disk = tmp.resolve("root.qcow2");
        host(List.of("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                image.rootfs().toAbsolutePath().toString(), disk.toString()), Duration.ofMinutes(1));
        spec = new VmSpec("wsbench-" + ProcessHandle.current().pid(), accel, o.cpus(), o.memoryMib(), image.vmlinux(),
                image.initramfs(), disk, String.join(" ", image.kernelCommandLine("sandbox"))
                + TscFrequency.kernelArg(accel), tmp.resolve("console.log"), tmp.resolve("qmp.sock"),
                tmp.resolve("agent.sock"), tmp.resolve("ws9p.sock"));
        List<String> argv = new ArrayList<>(QemuCommandLine.of(spec, qemu));
        if (o.profile()) {
            // QEMU names its threads (vCPUs, I/O thread, thread pool) only when asked; otherwise all carry the process name
            int i = argv.indexOf("-name") + 1;
            argv.set(i, argv.get(i) + ",debug-threads=on");
        }
        argv.addAll(List.of("-fsdev", "local,id=bench9p,path=" + base.hostDir().toString().replace(",", ",,")
                + ",security_model=none", "-device", "virtio-9p-device,fsdev=bench9p,mount_tag=bench9p"));
        qemuArgv = List.copyOf(argv);

        log("booting (" + accel.qemuName() + ")");
        Duration bootTimeout = accel == Accelerator.TCG ? Duration.ofSeconds(180) : Duration.ofSeconds(30);
        vm = Vm.boot(spec, qemuArgv, bootTimeout, q -> { });
        server = WorkspaceServer.start(kosa.hostDir(), spec.workspaceSocket(), spec.workspaceWindow(),
                spec.workspaceWrites(),
                Duration.ofSeconds(10),
                m -> System.err.println("workspace server: " + m),
                o.hold() ? HeldChanges.open(tmp.resolve("held"), null, m -> { }) : null);
        GuestCommand.mountWorkspace(vm.agent(), "", o.msize(), false, o.transport(), Duration.ofSeconds(60));
        guest("mkdir -p " + BASE + " && mount -t 9p -o trans=virtio," + o.mountOptions() + ",nosuid,nodev bench9p " + BASE,
                Duration.ofSeconds(60), l -> { });

        String facts = guest("grep ' 9p ' /proc/mounts; echo cpus $(nproc); grep MemTotal /proc/meminfo; uname -r",
                Duration.ofSeconds(30), l -> { });
        log("guest:\n" + facts.strip());

        // the tarball goes to a tmpfs in the guest: read from memory, it costs the same on both sides
        guest("mkdir -p /bench-src && mount -t tmpfs tmpfs /bench-src && cp " + BASE + "/src.tar /bench-src/"
                + " && git config --global --add safe.directory '*'", Duration.ofMinutes(10), l -> { });
        Files.delete(base.hostDir().resolve("src.tar"));

        // git's index holds the host's stat data: the first status in the guest re-reads every file and
        // rewrites the index; timed once per side as its own row, then the rounds measure the steady state
        for (Side s : List.of(base, kosa)) {
            timed(s, "cd " + s.guestDir() + "/repo && t gitfirst 'git status >/dev/null'", perFile(o.files()));
        }
        timed(base, "t gitversion 'git --version >/dev/null'", minutes(1));

        for (int r = 1; r <= o.rounds(); r++) {
            log("round " + r + " of " + o.rounds());
            List<Side> order = r % 2 == 1 ? List.of(base, kosa) : List.of(kosa, base);
            for (Side s : order) {
                bulk(s, "1M", 1, "");
            }
            if (o.profile()) {
                for (Side s : order) {
                    bulk(s, "64k", 16, "64k");
                }
            }
            for (Side s : order) {
                smallFiles(s);
            }
            for (Side s : order) {
                timed(s, "cd " + s.guestDir() + "/repo && t gitstatus 'git status >/dev/null'", perFile(o.files()));
            }
            for (Side s : order) {
                timed(s, "mkdir " + s.guestDir() + "/tarx && cd " + s.guestDir() + "/tarx && t tarx 'tar xf /bench-src/src.tar'",
                        perFile(treeFiles));
                deleteTree(s.hostDir().resolve("tarx")); // on the host: untimed and fast
            }
        }
        report(accel, facts, treeDesc);
    }

    void bulk(Side s, String bs, int perMib, String suffix) throws IOException {
        String f = s.guestDir() + "/seq.bin";
        long count = (long) o.sizeMib() * perMib;
        Duration timeout = Duration.ofSeconds(120 + 2L * o.sizeMib());
        timed(s, "t write" + suffix + " 'dd if=/dev/zero of=" + f + " bs=" + bs + " count=" + count
                + " conv=fsync status=none' && t read" + suffix + " 'dd if=" + f + " of=/dev/null bs=" + bs
                + " status=none'", timeout);
        Files.deleteIfExists(s.hostDir().resolve("seq.bin"));
    }

    void smallFiles(Side s) {
        String py = """
                import os, sys, time
                d, n = sys.argv[1], int(sys.argv[2])
                os.mkdir(d)
                names = [os.path.join(d, 'f%06d' % i) for i in range(n)]
                t0 = time.time()
                for p in names:
                    with open(p, 'wb') as f:
                        f.write(b'kosa8\\n')
                t1 = time.time()
                for p in names:
                    os.stat(p)
                t2 = time.time()
                for p in names:
                    os.unlink(p)
                t3 = time.time()
                os.rmdir(d)
                print('@T create', t0, t1); print('@T stat', t1, t2); print('@T delete', t2, t3)
                print('@T files', t0, t3)
                """;
        // python times each phase itself (its own start is not in the figures); t around it is for --profile
        timed(s, "t pyfiles 'python3 -c \"$PY\" " + s.guestDir() + "/files " + o.files() + "'",
                perFile(o.files()), Map.of("PY", py));
    }

    // ---------------------------------------------------------------- timing in the guest

    /**
     * bash functions every timed script gets: {@code t KEY 'CMD'} times CMD (after dropping the caches) and
     * prints {@code @T KEY start end}; {@code drop} syncs and drops the guest's caches. With --profile, t
     * also prints {@code @B}/{@code @E} around CMD (the host samples its threads on seeing them) and
     * snapshots every guest thread before and after, into a file on a tmpfs printed once CMD is done, so
     * that sending the snapshots costs nothing inside the window.
     */
    String prelude() {
        String snap = !o.profile() ? "snapt() { :; }; snapc() { :; }; SNAP=/dev/null\n" : """
                SNAP=/run/wsbench.snap
                snapt() {
                  local tag=$1 key=$2 t c s r w sr sw k v l
                  for t in /proc/[0-9]*/task/*; do
                    [ "$t" = /proc/$$/task/$$ ] && continue # this shell, busy with these very snapshots
                    read -r c < $t/comm 2>/dev/null || continue
                    read -r s l < $t/schedstat 2>/dev/null || continue
                    r=0 w=0 sr=0 sw=0
                    while read -r k v; do
                      case $k in rchar:) r=$v ;; wchar:) w=$v ;; syscr:) sr=$v ;; syscw:) sw=$v ;; esac
                    done < $t/io 2>/dev/null
                    c=${c%%/*}; echo "@S $tag $key guest:${c// /_} ${t##*/} $s $r $w $sr $sw"
                  done >> $SNAP
                }
                snapc() { local l; read -r l < /proc/stat; echo "@C $1 $2 $l" >> $SNAP; }
                """;
        return snap + """
                drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
                t() {
                  local k=$1 s e rc
                  drop; : > $SNAP; snapt B $k; snapc B $k; echo "@B $k"
                  s=$EPOCHREALTIME; eval "$2"; rc=$?; e=$EPOCHREALTIME
                  echo "@E $k"; snapc E $k; snapt E $k; cat $SNAP
                  [ $rc = 0 ] || { echo "$k failed with $rc" >&2; exit $rc; }
                  echo "@T $k $s $e"
                }
                """;
    }

    void timed(Side s, String script, Duration timeout) {
        timed(s, script, timeout, Map.of());
    }

    void timed(Side s, String script, Duration timeout, Map<String, String> env) {
        Map<String, Usage> guestBegin = new TreeMap<>();
        long[] cpuBegin = new long[3];
        guest(prelude() + script, timeout, env, line -> {
            String[] w = line.trim().split("\\s+");
            String key = w.length > 1 ? w[1] : "";
            switch (w[0]) {
                case "@T" -> {
                    double t = Double.parseDouble(w[3]) - Double.parseDouble(w[2]);
                    times.computeIfAbsent(key, k -> new LinkedHashMap<>())
                            .computeIfAbsent(s.label(), k -> new ArrayList<>()).add(t);
                    log(String.format(Locale.ROOT, "  %-10s on %-9s %8.2f s", key, s.label(), t));
                }
                case "@B" -> {
                    if (o.profile()) {
                        hostBegin.put(key + " " + s.label(), hostUsage());
                    }
                }
                case "@E" -> {
                    Map<String, Usage> begin = hostBegin.remove(key + " " + s.label());
                    if (begin != null) {
                        record(key, s, diff(hostUsage(), begin));
                    }
                }
                case "@S" -> {
                    // @S B|E key guest:NAME TID cpuNs rchar wchar syscr syscw; per thread, so threads that
                    // start or end inside the window count only from their start to their end
                    Usage u = new Usage(Long.parseLong(w[5]), Long.parseLong(w[6]), Long.parseLong(w[7]),
                            Long.parseLong(w[8]), Long.parseLong(w[9]));
                    String thread = w[2] + " " + w[4];
                    if (w[1].equals("B")) {
                        guestBegin.put(thread, u);
                    } else {
                        Usage b = guestBegin.remove(thread);
                        record(w[2], s, Map.of(w[3], b == null ? u : u.minus(b)));
                    }
                }
                case "@C" -> {
                    // @C B|E key cpu user nice system idle iowait irq softirq steal ...
                    long user = Long.parseLong(w[4]) + Long.parseLong(w[5]);
                    long sys = Long.parseLong(w[6]);
                    long irq = Long.parseLong(w[9]) + Long.parseLong(w[10]);
                    if (w[1].equals("B")) {
                        cpuBegin[0] = user;
                        cpuBegin[1] = sys;
                        cpuBegin[2] = irq;
                    } else {
                        // USER_HZ ticks to ns
                        record(w[2], s, Map.of(
                                "guest:(all vCPUs) user", new Usage((user - cpuBegin[0]) * 10_000_000, 0, 0, 0, 0),
                                "guest:(all vCPUs) kernel", new Usage((sys - cpuBegin[1]) * 10_000_000, 0, 0, 0, 0),
                                "guest:(all vCPUs) irq+softirq", new Usage((irq - cpuBegin[2]) * 10_000_000, 0, 0, 0, 0)));
                    }
                }
                default -> { }
            }
        });
    }

    void record(String key, Side s, Map<String, Usage> usage) {
        Map<String, Usage> m = profiles.computeIfAbsent(key + " " + s.label(), k -> new TreeMap<>());
        usage.forEach((k, v) -> m.merge(k, v, Usage::plus));
    }

    // ---------------------------------------------------------------- host-side /proc sampling

    /** QEMU's threads and this JVM's workspace server threads, keyed "group tid". */
    Map<String, Usage> hostUsage() {
        Map<String, Usage> m = new TreeMap<>();
        threads(vm.process().pid(), "qemu:", m, name -> name.startsWith("kosa8-") ? "main loop" : name);
        threads(ProcessHandle.current().pid(), "server:", m, name -> name.startsWith("ws9p") ? name : null);
        return m;
    }

    static void threads(long pid, String prefix, Map<String, Usage> into, java.util.function.Function<String, String> group) {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    String name = group.apply(Files.readString(t.resolve("comm")).strip());
                    if (name == null) {
                        continue;
                    }
                    long ns = Long.parseLong(Files.readString(t.resolve("schedstat")).split(" ")[0]);
                    Map<String, Long> io = new java.util.HashMap<>();
                    for (String l : Files.readAllLines(t.resolve("io"))) {
                        String[] kv = l.split(":\\s*");
                        io.put(kv[0], Long.parseLong(kv[1].strip()));
                    }
                    into.put(prefix + name + " " + t.getFileName(), new Usage(ns, io.get("rchar"), io.get("wchar"), io.get("syscr"),
                            io.get("syscw")));
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Per thread end - begin (a thread started meanwhile counts from zero), summed by group. */
    static Map<String, Usage> diff(Map<String, Usage> end, Map<String, Usage> begin) {
        Map<String, Usage> d = new TreeMap<>();
        end.forEach((k, v) -> d.merge(k.substring(0, k.lastIndexOf(' ')),
                v.minus(begin.getOrDefault(k, new Usage(0, 0, 0, 0, 0))), Usage::plus));
        return d;
    }

    // ---------------------------------------------------------------- guest commands

    String guest(String script, Duration timeout, Consumer<String> onLine) {
        return guest(script, timeout, Map.of(), onLine);
    }

    /** Runs a bash script in the guest, handing each stdout line to onLine as it arrives; fails on exit != 0 or timeout. */
    String guest(String script, Duration timeout, Map<String, String> env, Consumer<String> onLine) {
        AgentConnection agent = vm.agent();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        StringBuilder partial = new StringBuilder();
        CompletableFuture<Integer> done = new CompletableFuture<>();
        int[] ch = new int[1];
        ch[0] = agent.open(m -> {
            switch (m) {
                case Message.Data d -> {
                    if (d.stream() == Message.Stream.STDERR) {
                        err.writeBytes(d.bytes());
                    } else {
                        out.writeBytes(d.bytes());
                        partial.append(new String(d.bytes(), StandardCharsets.UTF_8));
                        int nl;
                        while ((nl = partial.indexOf("\n")) >= 0) {
                            String line = partial.substring(0, nl);
                            partial.delete(0, nl + 1);
                            try {
                                onLine.accept(line);
                            } catch (RuntimeException e) {
                                done.completeExceptionally(e);
                            }
                        }
                    }
                    agent.send(new Message.Credit(d.channel(), d.stream(), d.bytes().length));
                }
                case Message.Exited x -> done.complete(x.exitCode());
                case Message.Failed f -> done.completeExceptionally(new IllegalStateException(f.message()));
                default -> { }
            }
        });
        agent.send(new Message.Exec(ch[0], new Message.ExecSpec(List.of("bash", "-c", script), env, "/", "", false, 0, 0)));
        agent.send(new Message.Eof(ch[0], Message.Stream.STDIN));
        int code;
        try {
            code = done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            agent.abandon(ch[0]);
            throw new IllegalStateException("a guest command did not finish within " + timeout.toSeconds()
                    + " s (a hang?): " + lastLine(script) + "\nits output so far: " + out + err);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("guest command failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
        if (code != 0) {
            throw new IllegalStateException("guest command exited with " + code + ": " + lastLine(script) + "\n"
                    + err.toString(StandardCharsets.UTF_8));
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String lastLine(String script) {
        List<String> l = script.strip().lines().toList();
        return l.getLast();
    }

    /**
     * A hang guard for a command over n files: generous, as TCG on a busy host can take 100 ms and more
     * per file operation (a hang still ends in a failure showing the guest's console).
     */
    static Duration perFile(long n) {
        return Duration.ofSeconds(120 + n / 2);
    }

    static Duration minutes(int n) {
        return Duration.ofMinutes(n);
    }

    // ---------------------------------------------------------------- host-side staging

    /** A git repository of n small files in folders of 100, committed. */
    static Path gitRepo(Path repo, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            Path d = repo.resolve(String.format("d%03d", i / 100));
            if (i % 100 == 0) {
                Files.createDirectories(d);
            }
            Files.writeString(d.resolve(String.format("f%06d.txt", i)), "file " + i + "\n");
        }
        Duration t = Duration.ofMinutes(10);
        host(List.of("git", "-C", repo.toString(), "init", "-q", "-b", "main"), t);
        host(List.of("git", "-C", repo.toString(), "add", "-A"), t);
        host(List.of("git", "-C", repo.toString(), "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                "-c", "gc.auto=0", "commit", "-q", "-m", "files"), t);
        // pack now, in the foreground: a commit of thousands of files would start git's automatic gc in
        // the background, racing the copies made of this repository next
        host(List.of("git", "-C", repo.toString(), "gc", "-q"), t);
        return repo;
    }

    /** Makes the tarball of the source tree; returns a description (what, files, bytes). */
    String sourceTarball(Path stage, Path tarball) throws IOException {
        Path parent;
        String name;
        String what;
        if (o.tree() != null) {
            Path tree = o.tree().toAbsolutePath().normalize();
            parent = tree.getParent();
            name = tree.getFileName().toString();
            what = tree.toString();
        } else {
            Path zip = Path.of(System.getProperty("java.home"), "lib", "src.zip");
            if (!Files.isRegularFile(zip)) {
                throw new IllegalStateException("no " + zip + " to take a source tree from; pass --tree DIR");
            }
            parent = Files.createDirectory(stage.resolve("src"));
            name = "java.base";
            what = "java.base sources of " + zip + " (JDK " + Runtime.version() + ")";
            try (ZipFile z = new ZipFile(zip.toFile())) {
                for (ZipEntry e : z.stream().filter(e -> e.getName().startsWith("java.base/") && !e.isDirectory()).toList()) {
                    Path p = parent.resolve(e.getName()).normalize();
                    if (!p.startsWith(parent)) {
                        continue;
                    }
                    Files.createDirectories(p.getParent());
                    try (InputStream in = z.getInputStream(e)) {
                        Files.copy(in, p);
                    }
                }
            }
        }
        host(List.of("tar", "cf", tarball.toString(), "--owner=0", "--group=0", "-C", parent.toString(), name),
                Duration.ofMinutes(10));
        long[] filesAndBytes = new long[3];
        try (Stream<Path> s = Files.walk(parent.resolve(name))) {
            s.forEach(p -> {
                if (Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    filesAndBytes[0]++;
                    try {
                        filesAndBytes[1] += Files.size(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                } else if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    filesAndBytes[2]++;
                }
            });
        }
        treeFiles = filesAndBytes[0];
        return String.format(Locale.ROOT, "%s: %d files in %d directories, %.1f MiB (tarball %.1f MiB)", what,
                filesAndBytes[0], filesAndBytes[2], filesAndBytes[1] / 1048576.0, Files.size(tarball) / 1048576.0);
    }

    static void host(List<String> argv, Duration timeout) throws IOException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        try {
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", argv) + " did not finish within " + timeout.toSeconds() + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", argv) + " failed: " + new String(out, StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }

    void cleanup() {
        if (!cleaned.compareAndSet(false, true)) {
            return;
        }
        if (vm != null) {
            vm.kill();
        }
        if (server != null) {
            server.close();
        }
        try {
            if (data != null) {
                deleteTree(data);
            }
            deleteTree(tmp);
        } catch (IOException e) {
            System.err.println("could not delete " + tmp + ": " + e.getMessage());
        }
    }

    static void log(String s) {
        System.err.println("[wsbench] " + s);
    }

    // ---------------------------------------------------------------- the report

    void report(Accelerator accel, String facts, String treeDesc) {
        long size = (long) o.sizeMib() << 20;
        List<Row> rows = new ArrayList<>(List.of(
                new Row("write", "sequential write, " + o.sizeMib() + " MiB (`dd bs=1M conv=fsync`)", size),
                new Row("read", "sequential read of it, caches dropped (`dd bs=1M`)", size)));
        if (o.profile()) {
            rows.add(new Row("write64k", "sequential write, " + o.sizeMib() + " MiB, `dd bs=64k conv=fsync`", size));
            rows.add(new Row("read64k", "sequential read of it, `dd bs=64k`", size));
        }
        rows.addAll(List.of(
                new Row("files", "create+stat+delete of " + o.files() + " files (python3)", 0),
                new Row("create", "  of which create (open, write 6 bytes, close)", 0),
                new Row("stat", "  of which stat", 0),
                new Row("delete", "  of which delete", 0),
                new Row("gitstatus", "`git status`, checkout of " + o.files() + " files (index already refreshed)", 0),
                new Row("tarx", "`tar x` of a source tree (below), from a tmpfs", 0),
                new Row("gitfirst", "first `git status` in the guest: re-reads every file, rewrites the index (1 run)", 0)));
        System.out.println("| workload | QEMU virtio-9p (baseline) | kosa8 | ratio |");
        System.out.println("|---|---|---|---|");
        BenchResult result = new BenchResult("workspace").fact("accelerator", accel.qemuName())
                .fact("guest", o.cpus() + " vCPUs, " + o.memoryMib() + " MiB");
        for (Row r : rows) {
            Map<String, List<Double>> t = times.get(r.key());
            if (t == null) {
                continue;
            }
            double b = median(t.get("virtio-9p"));
            double k = median(t.get("kosa8"));
            result.add(BenchResult.Row.of(r.label().strip(), "s", BenchResult.Better.LOWER, k, t.get("kosa8"))
                    .baseline("QEMU's own virtio-9p in the same guest", b, t.get("virtio-9p"),
                            BenchResult.Ratio.BASELINE_OVER_FIGURE)
                    .goal(r.bytes() > 0 ? ">= 0.5" : ">= 1.0"));
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %.2f |%n", r.label(), cell(b, r.bytes()), cell(k, r.bytes()), b / k);
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "Ratio = baseline time / kosa8 time (1.00 = parity; below 1, kosa8 is slower). "
                + "Times are medians of %d rounds, measured inside the guest; the order of the two mounts alternates "
                + "each round.%n", o.rounds());
        System.out.println();
        System.out.println("- mount options, both: `" + o.mountOptions() + ",nosuid,nodev` (baseline `trans=virtio`, "
                + "kosa8 `trans=kosa8`, the kernel module, or `trans=fd` on the agent's relay, as the mount below "
                + "says); as the guest reports them (a kernel clamps msize to what "
                + "its transport takes: 6.1's virtio takes 512000):");
        facts.lines().filter(l -> l.contains(" 9p ")).forEach(l -> System.out.println("  - `" + l + "`"));
        facts.lines().filter(l -> !l.contains(" 9p ")).forEach(l -> System.out.println("- guest: " + l.replaceAll("\\s+", " ")));
        System.out.println("- accelerator: " + accel.qemuName() + "; guest " + o.cpus() + " vCPUs, " + o.memoryMib()
                + " MiB; host folders on " + fsType());
        Map<String, List<Double>> gv = times.get("gitversion");
        if (gv != null) {
            System.out.printf(Locale.ROOT, "- `git --version` alone (a git process start, no file system): %.2f s%n",
                    median(gv.get("virtio-9p")));
        }
        System.out.println("- source tree: " + treeDesc);
        System.out.println("- caches: the guest's are dropped (`sync; echo 3 > drop_caches`) before every timed "
                + "command; the host's are not (both folders share the host page cache alike)");
        System.out.println("- every run, seconds (baseline | kosa8):");
        times.forEach((key, bySide) -> System.out.println("  - " + key + ": " + fmt(bySide.get("virtio-9p")) + " | "
                + fmt(bySide.get("kosa8"))));
        System.out.println("- command: `" + ProcessHandle.current().info().commandLine().orElse("?") + "`");
        System.out.println("- QEMU: `" + String.join(" ", qemuArgv) + "`");
        if (o.profile()) {
            profileReport();
        }
        result.write();
    }

    void profileReport() {
        System.out.println();
        System.out.println("### Profile: where the time goes (summed over the rounds; `pyfiles` is the whole "
                + "create+stat+delete script, python's start included)");
        System.out.println();
        System.out.println("Time on a CPU in seconds (schedstat; the guest's as its own clock sees it) and the "
                + "read/write system calls of each thread, grouped by name, with their mean size (socket I/O by "
                + "recvmsg/sendmsg, as QEMU's chardev does it, is not counted). Host: QEMU's threads (`main loop` is "
                + "QEMU's I/O thread, which moves the chardev's bytes; `CPU n/TCG` run the guest; `worker` is QEMU's "
                + "thread pool, which serves virtio-9p); `server:` this JVM's WorkspaceServer threads. Guest: every "
                + "thread, among them the agent's relay (`ws9p-up` kernel → port, `ws9p-down` port → kernel) and the "
                + "kernel's 9p transport work in `kworker`; `(all vCPUs)` is /proc/stat in ticks of 10 ms.");
        for (String key : List.of("write", "read", "write64k", "read64k", "pyfiles", "gitstatus", "tarx")) {
            for (String side : List.of("virtio-9p", "kosa8")) {
                Map<String, Usage> m = profiles.get(key + " " + side);
                List<Double> t = times.getOrDefault(key, Map.of()).get(side);
                if (m == null || t == null) {
                    continue;
                }
                double wall = t.stream().mapToDouble(Double::doubleValue).sum();
                System.out.println();
                System.out.printf(Locale.ROOT, "**%s on %s** (%.2f s in all)%n%n", key, side, wall);
                System.out.println("| thread | CPU s | % of wall | reads | bytes/read | writes | bytes/write |");
                System.out.println("|---|---|---|---|---|---|---|");
                m.forEach((thread, u) -> {
                    if (u.cpuNs() < 0.005 * wall * 1e9 && u.syscr() == 0 && u.syscw() == 0) {
                        return; // under 0.5% of the time and no I/O: noise
                    }
                    System.out.printf(Locale.ROOT, "| %s | %.2f | %.0f%% | %d | %s | %d | %s |%n", thread,
                            u.cpuNs() / 1e9, 100 * u.cpuNs() / 1e9 / wall, u.syscr(), per(u.rchar(), u.syscr()),
                            u.syscw(), per(u.wchar(), u.syscw()));
                });
            }
        }
    }

    static String per(long bytes, long calls) {
        return calls == 0 ? "" : String.valueOf(bytes / calls);
    }

    static String cell(double seconds, long bytes) {
        String t = seconds < 10 ? String.format(Locale.ROOT, "%.2f s", seconds) : String.format(Locale.ROOT, "%.1f s", seconds);
        return bytes == 0 ? t : t + String.format(Locale.ROOT, " (%.1f MiB/s)", bytes / 1048576.0 / seconds);
    }

    static String fmt(List<Double> l) {
        return l == null ? "-" : String.join(", ", l.stream().map(d -> String.format(Locale.ROOT, "%.3f", d)).toList());
    }

    static double median(List<Double> l) {
        List<Double> s = new ArrayList<>(l);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    String fsType() {
        try {
            return Files.getFileStore(o.dir()).type() + " (" + o.dir() + ")";
        } catch (IOException e) {
            return o.dir().toString();
        }
    }
}
