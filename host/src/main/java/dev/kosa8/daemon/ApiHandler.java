package dev.kosa8.daemon;

import dev.kosa8.egress.NetMode;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.Limits;
import dev.kosa8.vm.AgentConnection;
import dev.kosa8.vm.WorkspaceTransport;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The daemon's REST API. Requests that take time (booting, stopping) run on
 * virtual threads, never on the event loop. Exec streams upgrade the
 * connection ({@code Upgrade: kosa8-stream}) to the agent protocol, relayed
 * by {@link ExecRelay}. See docs/api.md.
 */
final class ApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final String UPGRADE = "kosa8-stream";

    private final Daemon daemon;

    ApiHandler(Daemon daemon) {
        this.daemon = daemon;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        QueryStringDecoder q = new QueryStringDecoder(req.uri());
        List<String> parts = List.of(q.path().replaceAll("^/+|/+$", "").split("/"));
        HttpMethod method = req.method();
        byte[] body = io.netty.buffer.ByteBufUtil.getBytes(req.content());
        boolean upgrade = UPGRADE.equalsIgnoreCase(req.headers().get(HttpHeaderNames.UPGRADE, ""));
        if (upgrade) {
            ctx.channel().config().setAutoRead(false);
        }
        Thread.ofVirtual().name("api").start(() -> {
            try {
                route(ctx, method, parts, q, body, upgrade);
            } catch (KosaException e) {
                respond(ctx, status(e.kind()), Map.of("error", e.getMessage(), "suggestion", e.suggestion(),
                        "kind", e.kind().name(), "exitCode", e.exitCode()));
            } catch (RuntimeException e) {
                daemon.log("internal error on " + method + " " + q.path() + ": " + e);
                respond(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, Map.of("error", "internal error: " + e,
                        "suggestion", "see the daemon log at " + daemon.paths().daemonLog(), "kind", "INTERNAL",
                        "exitCode", 70));
            }
        });
    }

    private void route(ChannelHandlerContext ctx, HttpMethod m, List<String> p, QueryStringDecoder q, byte[] body,
                       boolean upgrade) {
        SandboxManager mgr = daemon.sandboxes();
        if (p.size() < 2 || !p.get(0).equals("v1")) {
            throw notFound();
        }
        String what = p.get(1);
        if (what.equals("version") && m == HttpMethod.GET) {
            respond(ctx, HttpResponseStatus.OK, Map.of("version", Daemon.VERSION, "build", daemon.build(),
                    "pid", ProcessHandle.current().pid(), "checkpointMode", mgr.checkpointMode().word()));
        } else if (what.equals("shutdown") && m == HttpMethod.POST) {
            respond(ctx, HttpResponseStatus.OK, Map.of("stopping", true));
            daemon.shutdownSoon();
        } else if (what.equals("run") && m == HttpMethod.POST && upgrade) {
            // Created before the stream opens: a refused create (a bad --allow, a missing image) is an ordinary
            // error answer, with its kind, exit code and what to do, not a bare stream failure. And the sandbox
            // goes when the client's connection does, whenever that is: a client killed while the sandbox booted
            // once left it running, since the stream's end came before there was a sandbox to remove.
            Sandbox s = mgr.create(createRequest(q, true));
            AtomicBoolean removed = new AtomicBoolean();
            Runnable remove = () -> {
                if (removed.compareAndSet(false, true)) {
                    Thread.ofVirtual().start(() -> mgr.remove(s, true));
                }
            };
            ctx.channel().closeFuture().addListener(f -> remove.run()); // at once if it closed during the boot
            switchToStream(ctx, s.id(), () -> s.current().agent(), () -> mgr.processes().environmentOf(s),
                    s.record().image().config(), remove);
        } else if (what.equals("images") && p.size() == 3 && p.get(2).equals("prune") && m == HttpMethod.POST) {
            List<Pruner.Item> removed = mgr.disk().prune(Boolean.parseBoolean(param(q, "dryRun", "false")));
            respond(ctx, HttpResponseStatus.OK, Map.of("removed", removed,
                    "bytes", removed.stream().mapToLong(Pruner.Item::bytes).sum()));
        } else if (what.equals("e2b") && p.size() == 2 && m == HttpMethod.GET) {
            respond(ctx, HttpResponseStatus.OK, daemon.e2b().status());
        } else if (what.equals("e2b") && p.size() == 3 && p.get(2).equals("start") && m == HttpMethod.POST) {
            int port;
            try {
                port = Integer.parseInt(param(q, "port", Integer.toString(E2bService.DEFAULT_PORT)));
            } catch (NumberFormatException e) {
                throw new KosaException(KosaException.Kind.USAGE, "the port must be a number", "");
            }
            respond(ctx, HttpResponseStatus.OK, daemon.e2b().start(param(q, "address", "127.0.0.1"), port));
        } else if (what.equals("e2b") && p.size() == 3 && p.get(2).equals("stop") && m == HttpMethod.POST) {
            respond(ctx, HttpResponseStatus.OK, daemon.e2b().stop());
        } else if (what.equals("df") && m == HttpMethod.GET) {
            respond(ctx, HttpResponseStatus.OK, mgr.disk().df());
        } else if (what.equals("images")) {
            new ImageRoutes().route(ctx, m, p, q, upgrade, mgr, (status, value) -> respond(ctx, status, value),
                    daemon::log);
        } else if (what.equals("sandboxes")) {
            sandboxes(ctx, m, p, q, body, upgrade, mgr);
        } else if (what.equals("net") && p.size() == 2 && m == HttpMethod.GET) {
            Map<String, Object> view = new LinkedHashMap<>(netSettingsView(mgr.networks(), true));
            view.put("trustHostCasByDefault", mgr.networks().settings().trustHostCas());
            respond(ctx, HttpResponseStatus.OK, view);
        } else if (what.equals("held") && p.size() >= 3) {
            held(ctx, m, p, q, mgr.held());
        } else if (what.equals("secrets") && p.size() == 3 && p.get(2).equals("reload") && m == HttpMethod.POST) {
            mgr.networks().reloadSecrets();
            respond(ctx, HttpResponseStatus.OK, Map.of("reloaded", true));
        } else {
            throw notFound();
        }
    }

    private void sandboxes(ChannelHandlerContext ctx, HttpMethod m, List<String> p, QueryStringDecoder q,
                           byte[] body, boolean upgrade, SandboxManager mgr) {
        if (p.size() == 2 && m == HttpMethod.GET) {
            respond(ctx, HttpResponseStatus.OK, mgr.list().stream().map(this::view).toList());
            return;
        }
        if (p.size() == 2 && m == HttpMethod.POST) {
            Sandbox s = mgr.create(createRequest(q, false));
            respond(ctx, HttpResponseStatus.CREATED, view(s));
            return;
        }
        if (p.size() < 3) {
            throw notFound();
        }
        Sandbox s = mgr.get(p.get(2));
        String action = p.size() > 3 ? p.get(3) : "";
        switch (action) {
            case "" -> {
                if (m == HttpMethod.GET) {
                    Map<String, Object> inspect = new LinkedHashMap<>(SandboxStore.JSON.convertValue(view(s),
                            new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() { }));
                    inspect.put("storage", mgr.disk().diskUse(s));
                    if (s.workspace() != null) {
                        // how the guest's cache of the folder is kept true to the host, or that it does not cache
                        inspect.put("workspaceCache", s.workspace().cacheState());
                    }
                    respond(ctx, HttpResponseStatus.OK, inspect);
                } else if (m == HttpMethod.DELETE) {
                    int kept = mgr.remove(s, "true".equals(param(q, "force", "false")),
                            "true".equals(param(q, "discardHeld", "false")));
                    respond(ctx, HttpResponseStatus.OK, Map.of("removed", s.id(), "heldKept", kept));
                } else {
                    throw notFound();
                }
            }
            case "stop" -> {
                mgr.stop(s, "true".equals(param(q, "shutdown", "false")));
                respond(ctx, HttpResponseStatus.OK, view(s));
            }
            case "start" -> {
                mgr.start(s);
                respond(ctx, HttpResponseStatus.OK, view(s));
            }
            case "processes" -> new ProcessRoutes(mgr.processes()).processes(s, m, p, q, body,
                    (status, value) -> respond(ctx, status, value));
            case "files" -> new FileRoutes(mgr.files()).route(ctx, s, m, p, q, body,
                    (status, value) -> respond(ctx, status, value));
            case "env" -> {
                if (p.size() != 4) {
                    throw notFound();
                }
                new ProcessRoutes(mgr.processes()).environment(s, m, q, (status, value) -> respond(ctx, status, value));
            }
            case "logs" -> respond(ctx, HttpResponseStatus.OK, Map.of("console",
                    mgr.logs(s, Integer.parseInt(param(q, "lines", "200")))));
            case "net" -> {
                String sub = p.size() > 4 ? p.get(4) : "";
                if (m != (sub.isEmpty() ? HttpMethod.GET : HttpMethod.POST)) {
                    throw notFound();
                }
                var net = switch (sub) {
                    case "" -> s.record().network();
                    case "allow" -> mgr.networks().allow(s, q.parameters().getOrDefault("rule", List.of()));
                    case "deny" -> mgr.networks().deny(s, param(q, "host", ""));
                    default -> throw notFound();
                };
                Map<String, Object> view = new LinkedHashMap<>(netSettingsView(mgr.networks(), net.trustHostCas()));
                view.put("mode", net.mode().label());
                view.put("allow", net.allow());
                view.put("trustHostCas", net.trustHostCas());
                view.put("log", mgr.networks().auditLog(s).toString());
                respond(ctx, HttpResponseStatus.OK, view);
            }
            case "exec" -> {
                if (!upgrade) {
                    throw new KosaException(KosaException.Kind.USAGE, "exec needs `Upgrade: " + UPGRADE + "`", "");
                }
                s.current(); // a sandbox that is not running is an HTTP error, before the upgrade
                s.openStream(mgr.streamsPerSandbox());
                // the machine is taken again when the command starts: a rewind in between sends it to the one put back
                switchToStream(ctx, s.id(), () -> s.current().agent(), () -> mgr.processes().environmentOf(s),
                        s.record().image().config(), s::closeStream);
            }
            case "memory-dump" -> {
                if (m != HttpMethod.POST) {
                    throw notFound();
                }
                Path file = Path.of(param(q, "path", ""));
                mgr.dumpMemory(s, file);
                respond(ctx, HttpResponseStatus.OK, Map.of("path", file.toString()));
            }
            case "ports" -> new PortRoutes(mgr).route(s, m, p, q, (status, value) -> respond(ctx, status, value));
            case "secrets" -> {
                String sub = p.size() > 4 ? p.get(4) : "";
                if (m != (sub.isEmpty() ? HttpMethod.GET : HttpMethod.POST)) {
                    throw notFound();
                }
                List<String> names = q.parameters().getOrDefault("name", List.of());
                var granted = switch (sub) {
                    case "" -> s.record().secrets();
                    case "grant" -> mgr.networks().grant(s, names);
                    case "revoke" -> mgr.networks().revoke(s, names);
                    default -> throw notFound();
                };
                respond(ctx, HttpResponseStatus.OK, Map.of("secrets", granted.stream()
                        .map(g -> Map.of("name", g.name(), "env", g.env())).toList()));
            }
            default -> {
                if (!new UndoRoutes(mgr, this::view).route(s, action, m, p, q,
                        (status, value) -> respond(ctx, status, value))) {
                    throw notFound();
                }
            }
        }
    }

    /**
     * The user's network settings as `kosa8 net` shows them: the address exceptions and, when {@code withCas}, what
     * the host's CAs are.
     */
    private static Map<String, Object> netSettingsView(SandboxNetworks networks, boolean withCas) {
        var settings = networks.settings();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("settings", dev.kosa8.host.HostPaths.config().resolve(dev.kosa8.egress.NetworkSettings.FILE).toString());
        v.put("addressExceptions", settings.exceptions().all().stream().map(Object::toString).toList());
        if (withCas) {
            var cas = settings.hostCas();
            v.put("hostCas", cas.describe());
            v.put("hostCaProblems", cas.problems());
        }
        return v;
    }

    /** {@code /v1/held/ID}: a sandbox's held changes, or a removed one's kept ones (docs/api.md). */
    private void held(ChannelHandlerContext ctx, HttpMethod m, List<String> p, QueryStringDecoder q, SandboxHeld held) {
        String id = p.get(2);
        String sub = p.size() > 3 ? p.get(3) : "";
        List<String> paths = q.parameters().getOrDefault("path", List.of());
        boolean all = "true".equals(param(q, "all", "false"));
        if (sub.isEmpty() && m == HttpMethod.GET) {
            if ("true".equals(param(q, "countOnly", "false"))) {
                respond(ctx, HttpResponseStatus.OK, Map.of("count", held.countAnywhere(id)));
                return;
            }
            SandboxHeld.Review r = held.review(id, "true".equals(param(q, "diff", "true")));
            respond(ctx, HttpResponseStatus.OK, Map.of("id", r.id(), "folder", r.folder(), "held", r.entries().stream()
                    .map(e -> Map.of("path", e.unit().path(), "class", e.unit().className(), "change",
                            e.change().name().toLowerCase(java.util.Locale.ROOT), "conflict", e.conflict(),
                            "protects", e.protects(), "size", e.size(), "since", e.unit().since().toString(),
                            "diff", e.diff())).toList()));
        } else if ((sub.equals("accept") || sub.equals("reject")) && m == HttpMethod.POST) {
            SandboxHeld.Done d = sub.equals("accept") ? held.accept(id, paths, all) : held.reject(id, paths, all);
            respond(ctx, HttpResponseStatus.OK, Map.of("id", d.id(), "done", d.outcome().done(),
                    "conflicts", d.outcome().conflicts(), "left", d.left()));
        } else {
            throw notFound();
        }
    }

    private SandboxView view(Sandbox s) {
        return SandboxView.of(s, daemon.sandboxes().directory(s).toString());
    }

    private static SandboxManager.CreateRequest createRequest(QueryStringDecoder q, boolean ephemeral) {
        try {
            return new SandboxManager.CreateRequest(ephemeral, Integer.parseInt(param(q, "cpus", "2")),
                    Integer.parseInt(param(q, "memoryMiB", "1024")), param(q, "accelerator", "auto"),
                    param(q, "workspace", ""), NetMode.parse(param(q, "net", "closed")),
                    q.parameters().getOrDefault("allow", List.of()), q.parameters().getOrDefault("secret", List.of()),
                    WorkspaceTransport.parse(param(q, "workspaceTransport", "")),
                    q.parameters().containsKey("trustHostCas") ? Boolean.valueOf(param(q, "trustHostCas", "false"))
                            : null, param(q, "image", ""),
                    q.parameters().getOrDefault("hold", List.of()), q.parameters().getOrDefault("noHold", List.of()),
                    new Budget.Change(longParam(q, "diskBudget"), intParam(q, "maxCheckpoints"),
                            longParam(q, "checkpointBytes"), longParam(q, "consoleLimit")),
                    PortRoutes.portsParam(q), param(q, "createdBy", ""))
                    .withArch(q.parameters().containsKey("arch") ? dev.kosa8.vm.GuestArch.parse(param(q, "arch", ""))
                            : null);
        } catch (NumberFormatException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cpus, memory and the budget's values must be numbers",
                    "");
        }
    }

    private static Long longParam(QueryStringDecoder q, String name) {
        String v = param(q, name, "");
        return v.isEmpty() ? null : Long.parseLong(v);
    }

    private static Integer intParam(QueryStringDecoder q, String name) {
        String v = param(q, name, "");
        return v.isEmpty() ? null : Integer.parseInt(v);
    }

    static String param(QueryStringDecoder q, String name, String dflt) {
        List<String> v = q.parameters().get(name);
        return v == null || v.isEmpty() ? dflt : v.getFirst();
    }

    /** Answers 101 and turns the connection into an agent-protocol stream. */
    private void switchToStream(ChannelHandlerContext ctx, String sandbox, Supplier<AgentConnection> agent,
                                Supplier<Map<String, String>> extraEnv, dev.kosa8.image.ImageConfig image,
                                Runnable onEnd) {
        AtomicBoolean ended = new AtomicBoolean();
        Runnable once = () -> {
            if (ended.compareAndSet(false, true)) {
                onEnd.run();
            }
        };
        ctx.executor().execute(() -> {
            FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SWITCHING_PROTOCOLS);
            res.headers().set(HttpHeaderNames.UPGRADE, UPGRADE).set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE)
                    .set("Kosa8-Sandbox", sandbox);
            ctx.writeAndFlush(res);
            var pipeline = ctx.pipeline();
            pipeline.remove(HttpServerCodec.class);
            pipeline.remove(HttpObjectAggregator.class);
            pipeline.addLast(new LengthFieldBasedFrameDecoder(Limits.MAX_FRAME + Codec.HEADER, 0, Codec.HEADER, 0,
                    Codec.HEADER));
            pipeline.addLast(new ExecRelay(agent, extraEnv, image, once));
            pipeline.remove(this);
            ctx.channel().config().setAutoRead(true);
            if (!ctx.channel().isActive()) {
                once.run(); // the client left before the relay was there to see it
            }
        });
    }

    static KosaException notFound() {
        return new KosaException(KosaException.Kind.USAGE, "no such API endpoint", "see docs/api.md");
    }

    private static HttpResponseStatus status(KosaException.Kind k) {
        return switch (k) {
            case USAGE -> HttpResponseStatus.BAD_REQUEST;
            case STATE -> HttpResponseStatus.CONFLICT;
            case LIMIT -> HttpResponseStatus.TOO_MANY_REQUESTS;
            default -> HttpResponseStatus.INTERNAL_SERVER_ERROR;
        };
    }

    private void respond(ChannelHandlerContext ctx, HttpResponseStatus status, Object value) {
        byte[] json;
        try {
            json = SandboxStore.JSON.writeValueAsBytes(value);
        } catch (Exception e) {
            json = ("{\"error\":\"cannot encode the response\"}").getBytes(StandardCharsets.UTF_8);
        }
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(json));
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, json.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

}
