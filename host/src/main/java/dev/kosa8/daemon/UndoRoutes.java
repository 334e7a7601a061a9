package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Checkpoint;
import dev.kosa8.host.KosaException;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * {@code /v1/sandboxes/ID/checkpoints|rewind|fork|adopt|diff}: undo, through {@link SandboxUndo}, and what
 * follows from forks (docs/api.md, "Checkpoints").
 */
final class UndoRoutes {
    private final SandboxManager mgr;
    private final Function<Sandbox, SandboxView> sandboxView;

    UndoRoutes(SandboxManager mgr, Function<Sandbox, SandboxView> view) {
        this.mgr = mgr;
        this.sandboxView = view;
    }

    /** Serves {@code action} of sandbox {@code s}; false if the action is not one of undo's. */
    boolean route(Sandbox s, String action, HttpMethod m, List<String> p, QueryStringDecoder q,
                  BiConsumer<HttpResponseStatus, Object> respond) {
        switch (action) {
            case "checkpoints" -> {
                boolean wait = Boolean.parseBoolean(param(q, "wait", "false"));
                if (m == HttpMethod.POST && p.size() == 4) {
                    var c = mgr.undo().checkpoint(s, param(q, "message", ""), wait);
                    respond.accept(HttpResponseStatus.CREATED, checkpointView(c, null));
                } else if (m == HttpMethod.GET && p.size() == 5) {
                    respond.accept(HttpResponseStatus.OK, checkpointView(mgr.undo().findCheckpoint(s, p.get(4), wait),
                            null));
                } else if (m == HttpMethod.GET && p.size() == 4) {
                    Map<String, Integer> turns = mgr.undo().turnsOf(s);
                    respond.accept(HttpResponseStatus.OK, mgr.undo().checkpoints(s).stream()
                            .map(e -> turnView(checkpointView(e.checkpoint(), e.bytesOnDisk()), turns)).toList());
                } else if (m == HttpMethod.DELETE && p.size() == 5) {
                    respond.accept(HttpResponseStatus.OK, checkpointView(mgr.undo().removeCheckpoint(s, p.get(4)),
                            null));
                } else {
                    throw notFound();
                }
            }
            case "rewind" -> {
                if (m != HttpMethod.POST) {
                    throw notFound();
                }
                long start = System.nanoTime();
                String turn = param(q, "turn", "");
                var r = turn.isEmpty() ? mgr.undo().rewind(s, param(q, "checkpoint", ""))
                        : mgr.undo().rewindToTurn(s, turnNumber(turn));
                Map<String, Object> view = new LinkedHashMap<>(checkpointView(r.checkpoint(), null));
                view.put("rewindMillis", (System.nanoTime() - start) / 1_000_000);
                view.put("rewindStepMillis", r.stepMillis());
                respond.accept(HttpResponseStatus.OK, view);
            }
            case "fork" -> {
                if (m != HttpMethod.POST) {
                    throw notFound();
                }
                String checkpoint = param(q, "checkpoint", "");
                if (checkpoint.isEmpty()) {
                    throw new KosaException(KosaException.Kind.USAGE, "a fork needs a checkpoint to start from",
                            "`kosa8 checkpoints " + s.id() + "` lists them");
                }
                String by = SandboxManager.CreateRequest.checkCreatedBy(param(q, "createdBy", ""));
                Sandbox forked = mgr.undo().fork(s, checkpoint, param(q, "workspace", ""), by,
                        ForkFolderChoice.Mode.parse(param(q, "folder", "")));
                respond.accept(HttpResponseStatus.CREATED, sandboxView.apply(forked));
            }
            case "adopt" -> {
                if (m != HttpMethod.POST) {
                    throw notFound();
                }
                Adoptions.Result r = mgr.adoptions().adopt(s.id(), param(q, "into", ""),
                        "true".equals(param(q, "dryRun", "false")));
                Map<String, Object> view = new LinkedHashMap<>();
                view.put("fork", r.fork());
                view.put("into", r.into());
                view.put("folder", r.folder());
                view.put("dryRun", r.dryRun());
                view.put("applied", r.applied());
                view.put("held", r.held());
                view.put("conflicts", r.conflicts());
                view.put("already", r.already());
                view.put("skipped", r.skipped());
                view.put("forkHeld", r.forkHeld());
                respond.accept(HttpResponseStatus.OK, view);
            }
            case "diff" -> {
                if (m != HttpMethod.GET) {
                    throw notFound();
                }
                String since = param(q, "checkpoint", "");
                List<Map<String, Object>> changes = mgr.diff(s, since).stream().map(UndoRoutes::changeView).toList();
                respond.accept(HttpResponseStatus.OK, Map.of("id", s.id(), "folder", s.record().workspace(),
                        "since", since.isEmpty() ? "start" : since, "changes", changes,
                        "held", mgr.held().countAnywhere(s.id())));
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** One {@code kosa8 diff} change as the API gives it (docs/api.md). */
    private static Map<String, Object> changeView(dev.kosa8.checkpoint.FolderChange c) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("path", c.path());
        v.put("change", c.change().name().toLowerCase(java.util.Locale.ROOT));
        v.put("before", c.before());
        v.put("after", c.after());
        v.put("text", c.text());
        v.put("added", c.added());
        v.put("removed", c.removed());
        return v;
    }

    private static Map<String, Object> checkpointView(Checkpoint c, Long bytes) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", c.id());
        v.put("created", c.created().toString());
        v.put("message", c.message());
        v.put("pauseMillis", c.pauseMillis());
        v.put("savedMillis", c.savedMillis());
        v.put("vmStateBytes", c.vmStateBytes());
        v.put("workspaceEntries", c.workspaceEntries());
        v.put("workspaceBytesCopied", c.workspaceBytesCopied());
        v.put("stepMillis", c.stepMillis());
        v.put("state", c.state().label());
        if (!c.failure().isEmpty()) {
            v.put("failure", c.failure());
        }
        if (bytes != null) {
            v.put("bytesOnDisk", bytes);
        }
        return v;
    }

    /** The view with the checkpoint's turn number, when it is a turn checkpoint (docs/agents.md). */
    private static Map<String, Object> turnView(Map<String, Object> v, Map<String, Integer> turns) {
        Integer t = turns.get((String) v.get("id"));
        if (t != null) {
            v.put("turn", t);
        }
        return v;
    }

    private static int turnNumber(String s) {
        try {
            int n = Integer.parseInt(s);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new KosaException(KosaException.Kind.USAGE, "turn must be a positive number, not '" + s + "'",
                "`kosa8 checkpoints ID` lists the turns");
    }

    private static String param(QueryStringDecoder q, String name, String dflt) {
        return ApiHandler.param(q, name, dflt);
    }

    private static KosaException notFound() {
        return ApiHandler.notFound();
    }
}
