package dev.kosa8.daemon;

import dev.kosa8.e2b.E2bBackend;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.KosaException;
import dev.kosa8.files.FileGuest;
import dev.kosa8.files.GuestFiles;
import dev.kosa8.processes.Guest;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.Processes;
import java.util.List;
import java.util.Optional;

/**
 * The daemon's sandboxes as the E2B listener uses them ({@link E2bBackend}): a sandbox E2B makes is an ordinary
 * persistent kosa8 sandbox (no folder shared, the network closed, as `kosa8 create --workspace none` makes it),
 * pausing is a stop to disk, resuming a start.
 */
final class E2bBridge implements E2bBackend {
    private final SandboxManager mgr;

    E2bBridge(SandboxManager mgr) {
        this.mgr = mgr;
    }

    @Override
    public String create(String image, int cpus, int memoryMiB) {
        Sandbox s = mgr.create(new SandboxManager.CreateRequest(false, cpus, memoryMiB, "auto", "", NetMode.CLOSED,
                List.of(), List.of(), null, null, image, List.of(), List.of(), null, List.of()));
        return s.id();
    }

    @Override
    public Optional<Machine> find(String id) {
        Sandbox s;
        try {
            s = mgr.get(id);
        } catch (KosaException e) {
            return Optional.empty();
        }
        if (!s.id().equals(id)) {
            return Optional.empty(); // a prefix of another: E2B names sandboxes whole
        }
        SandboxRecord r = s.record();
        State st = switch (r.state()) {
            case RUNNING -> State.RUNNING;
            case STOPPED -> State.PAUSED;
            case REMOVING -> null;
            default -> State.OTHER;
        };
        if (st == null) {
            return Optional.empty();
        }
        return Optional.of(new Machine(id, r.image().name(), st, r.cpus(), r.memoryMiB(), r.created()));
    }

    @Override
    public void remove(String id) {
        mgr.remove(mgr.get(id), true);
    }

    @Override
    public void pause(String id) {
        mgr.stop(mgr.get(id), false);
    }

    @Override
    public void resume(String id) {
        mgr.start(mgr.get(id));
    }

    @Override
    public Guest guest(String id) {
        return new SandboxProcesses.AgentGuest(mgr.get(id).current().agent());
    }

    @Override
    public FileGuest fileGuest(String id) {
        return new SandboxFiles.AgentGuest(mgr.get(id).current().agent());
    }

    @Override
    public GuestFiles files() {
        return mgr.files().files();
    }

    @Override
    public ProcessInfo start(String id, Processes.Start start) {
        return mgr.processes().start(mgr.get(id), start);
    }

    @Override
    public Processes processes() {
        return mgr.processes().all();
    }
}
