package dev.kosa8.e2b;

import dev.kosa8.host.KosaException;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Sends each request where it belongs: a request naming a sandbox ({@code E2b-Sandbox-Id}) to envd, any other to
 * the control plane; so one URL serves as both {@code E2B_API_URL} and {@code E2B_SANDBOX_URL}. Whatever a
 * handler throws is answered as E2B answers errors.
 */
final class E2bRouter {
    private final ControlPlane control;
    private final Envd envd;
    private final Consumer<String> log;

    E2bRouter(ControlPlane control, Envd envd, Consumer<String> log) {
        this.control = control;
        this.envd = envd;
        this.log = log;
    }

    void handle(Exchange x) {
        try {
            String sandbox = x.headers.get("E2b-Sandbox-Id");
            if (sandbox != null) {
                envd.handle(x, sandbox);
            } else {
                control.handle(x);
            }
        } catch (ApiError e) {
            error(x, e.status(), e.getMessage());
        } catch (ConnectError e) {
            error(x, e.code().httpStatus, e.getMessage());
        } catch (KosaException e) {
            error(x, switch (e.kind()) {
                case USAGE -> 400;
                case STATE -> 409;
                case LIMIT -> 429;
                default -> 500;
            }, e.getMessage() + (e.suggestion().isEmpty() ? "" : " (" + e.suggestion() + ")"));
        } catch (java.io.IOException e) {
            x.abort(); // the client went while its body was read
        } catch (RuntimeException e) {
            log.accept("e2b: internal error on " + x.method + " " + x.path + ": " + e);
            error(x, 500, "internal error: " + e);
        }
    }

    private static void error(Exchange x, int status, String message) {
        if (x.started()) {
            x.abort();
            return;
        }
        x.json(status, Map.of("code", status, "message", message == null ? "" : message));
    }
}
