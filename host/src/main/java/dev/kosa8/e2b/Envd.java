package dev.kosa8.e2b;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The in-sandbox API, envd, for every sandbox behind one URL: the sandbox is named by the {@code E2b-Sandbox-Id}
 * header and must be answered for by its own {@code X-Access-Token}; only envd's port (49983) is served. Routes
 * to {@code /health}, {@code /files} and the Connect services.
 */
final class Envd {
    static final String ENVD_PORT = "49983";

    private final E2bSandboxes sandboxes;
    private final ProcessService processes;
    private final FileTransfer files;
    private final FilesystemService filesystem;

    Envd(E2bSandboxes sandboxes) {
        this.sandboxes = sandboxes;
        this.processes = new ProcessService(sandboxes.backend());
        this.files = new FileTransfer(sandboxes.backend());
        this.filesystem = new FilesystemService(sandboxes.backend());
    }

    void handle(Exchange x, String sandboxId) throws IOException {
        boolean rpc = x.path.startsWith("/process.Process/") || x.path.startsWith("/filesystem.Filesystem/");
        try {
            String port = x.headers.get("E2b-Sandbox-Port", ENVD_PORT);
            if (!port.equals(ENVD_PORT)) {
                throw new ApiError(502, "kosa8's E2B listener serves envd (port " + ENVD_PORT + ") alone; reach"
                        + " port " + port + " with `kosa8 port " + sandboxId + " " + port + "` (docs/e2b.md)");
            }
            E2bSandbox s = sandboxes.find(sandboxId).orElseThrow(() -> new ApiError(502, "sandbox " + sandboxId
                    + " not found"));
            if (!Secrets.sameKey(s.accessToken, x.headers.get("X-Access-Token"))) {
                throw new ApiError(401, x.headers.contains("X-Access-Token")
                        ? "the access token is not sandbox " + sandboxId + "'s"
                        : "no access token: send the sandbox's envdAccessToken in X-Access-Token");
            }
            var machine = sandboxes.backend().find(sandboxId);
            if (machine.isEmpty() || machine.get().state() != E2bBackend.State.RUNNING) {
                throw new ApiError(502, "sandbox " + sandboxId + " is not running: connect to it to resume it");
            }
            String user = basicUser(x.headers.get("Authorization"));
            if (x.path.equals("/health")) {
                x.empty(204);
            } else if (x.path.equals("/files")) {
                files.handle(x, s, user);
            } else if (rpc) {
                if (!x.method.name().equals("POST")) {
                    throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "Connect calls are POSTs");
                }
                ConnectCall c = new ConnectCall(x);
                try {
                    String method = x.path.substring(x.path.lastIndexOf('/') + 1);
                    if (x.path.startsWith("/process.Process/")) {
                        processes.call(method, s, c, user);
                    } else {
                        filesystem.call(method, s, c, user);
                    }
                } catch (ConnectError e) {
                    c.fail(e);
                }
            } else {
                throw ApiError.notFound("envd has no " + x.method + " " + x.path);
            }
        } catch (ApiError e) {
            if (rpc) {
                // a Connect client reads the code from the HTTP status when the body is not Connect's
                ConnectError ce = new ConnectError(switch (e.status()) {
                    case 401 -> ConnectError.Code.UNAUTHENTICATED;
                    case 404 -> ConnectError.Code.NOT_FOUND;
                    case 400 -> ConnectError.Code.INVALID_ARGUMENT;
                    case 502 -> ConnectError.Code.UNAVAILABLE;
                    default -> ConnectError.Code.INTERNAL;
                }, e.getMessage());
                x.bytes(e.status() == 502 ? 502 : ce.code().httpStatus, "application/json",
                        Exchange.utf8(ConnectEnvelope.errorJson(ce)));
            } else {
                throw e;
            }
        } catch (ConnectError e) {
            x.bytes(e.code().httpStatus, "application/json", Exchange.utf8(ConnectEnvelope.errorJson(e)));
        }
    }

    /** The user of {@code Authorization: Basic base64(user:)}, as the SDK names one; empty for none. */
    static String basicUser(String header) {
        if (header == null || header.isEmpty()) {
            return "";
        }
        if (!header.regionMatches(true, 0, "Basic ", 0, 6)) {
            throw new ApiError(401, "Authorization is Basic base64(user:)");
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new ApiError(401, "Authorization's credentials are not base64");
        }
        int colon = decoded.indexOf(':');
        String user = colon < 0 ? decoded : decoded.substring(0, colon);
        if (!user.isEmpty()) {
            FileTransfer.checkUser(user);
        }
        return user;
    }
}
