package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/** {@code /v1/sandboxes/ID/ports}: a sandbox's published ports, through {@link PublishedPorts} (docs/ports.md). */
final class PortRoutes {
    private final SandboxManager mgr;

    PortRoutes(SandboxManager mgr) {
        this.mgr = mgr;
    }

    void route(Sandbox s, HttpMethod m, List<String> p, QueryStringDecoder q,
               BiConsumer<HttpResponseStatus, Object> respond) {
        if (m == HttpMethod.GET && p.size() == 4) {
            respond.accept(HttpResponseStatus.OK, mgr.ports().list(s).stream().map(x -> {
                Map<String, Object> v = portView(x.mapping());
                v.put("listening", x.listening());
                v.put("connections", x.connections());
                v.put("problem", x.problem());
                return v;
            }).toList());
        } else if (m == HttpMethod.POST && p.size() == 4) {
            List<dev.kosa8.ports.PortMapping> asked = portsParam(q);
            if (asked.isEmpty()) {
                throw new KosaException(KosaException.Kind.USAGE, "no port to publish",
                        "give port=[[ADDRESS:]HOST:]GUEST");
            }
            respond.accept(HttpResponseStatus.CREATED, Map.of("published", mgr.ports().publish(s, asked).stream()
                    .map(PortRoutes::portView).toList()));
        } else if (m == HttpMethod.DELETE && p.size() == 5) {
            int port;
            try {
                port = Integer.parseInt(p.get(4));
            } catch (NumberFormatException e) {
                throw new KosaException(KosaException.Kind.USAGE, "'" + p.get(4) + "' is not a port number",
                        "name the guest port or the host port");
            }
            respond.accept(HttpResponseStatus.OK, Map.of("removed", mgr.ports().unpublish(s, port).stream()
                    .map(PortRoutes::portView).toList()));
        } else {
            throw ApiHandler.notFound();
        }
    }

    /** The {@code port} parameters, each {@code [[ADDRESS:]HOST:]GUEST} as `-p` takes it. */
    static List<dev.kosa8.ports.PortMapping> portsParam(QueryStringDecoder q) {
        return q.parameters().getOrDefault("port", List.of()).stream().map(dev.kosa8.ports.PortMapping::parse).toList();
    }

    private static Map<String, Object> portView(dev.kosa8.ports.PortMapping m) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("guestPort", m.guestPort());
        v.put("hostAddress", m.hostAddress());
        v.put("hostPort", m.hostPort());
        return v;
    }
}
