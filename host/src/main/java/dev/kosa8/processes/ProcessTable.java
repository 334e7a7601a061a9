package dev.kosa8.processes;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The processes of one sandbox, oldest first, within its {@link ProcessLimits}: at most {@code running} at once
 * (one more is refused, 429), and the newest {@code finishedKept} of those that ended; an older ended one is
 * forgotten, output and all, when another ends.
 */
final class ProcessTable {
    private final String sandbox;
    private final ProcessLimits limits;
    private final Map<String, GuestProcess> byId = new LinkedHashMap<>();
    private long next = 1;

    ProcessTable(String sandbox, ProcessLimits limits) {
        this.sandbox = sandbox;
        this.limits = limits;
    }

    /** A new process, counted as running; refused when the sandbox runs as many as it may. */
    synchronized GuestProcess add(Message.ExecSpec spec, String tag, Duration timeout) {
        long running = byId.values().stream().filter(GuestProcess::running).count();
        if (running >= limits.running()) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandbox + " has " + running
                    + " processes running, the most it may have at once",
                    "end one (`kosa8 procs " + sandbox + "` lists them, `kosa8 kill " + sandbox + " PROC` ends one), or"
                            + " raise \"processes\" in kosa8's settings.json (then `kosa8 daemon stop`)");
        }
        GuestProcess p = new GuestProcess("p" + next++, spec, tag, timeout, limits.outputBytes(), this::ended);
        byId.put(p.id(), p);
        return p;
    }

    /** One process ended: the oldest ended ones beyond the bound are forgotten. */
    private synchronized void ended(GuestProcess p) {
        long finished = byId.values().stream().filter(x -> !x.running()).count();
        for (Iterator<GuestProcess> it = byId.values().iterator(); it.hasNext() && finished > limits.finishedKept(); ) {
            if (!it.next().running()) {
                it.remove();
                finished--;
            }
        }
    }

    synchronized GuestProcess get(String id) {
        GuestProcess p = byId.get(id);
        if (p == null) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + sandbox + " has no process " + id,
                    "`kosa8 procs " + sandbox + "` lists its processes; of those that ended it keeps the last "
                            + limits.finishedKept());
        }
        return p;
    }

    /** Forgets an ended process and its output. */
    synchronized void remove(String id) {
        GuestProcess p = get(id);
        if (p.running()) {
            throw new KosaException(KosaException.Kind.STATE, "process " + id + " is still running",
                    "end it first: `kosa8 kill " + sandbox + " " + id + "`");
        }
        byId.remove(id);
    }

    synchronized List<GuestProcess> all() {
        return new ArrayList<>(byId.values());
    }
}
