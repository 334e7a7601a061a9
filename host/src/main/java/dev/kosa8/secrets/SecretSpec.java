package dev.kosa8.secrets;

import dev.kosa8.net.HostName;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What kosa8 knows about one secret apart from its value: the one host (and
 * port) the broker may send it to, the header it goes in, the environment
 * variable under which a sandbox finds its placeholder, when it was set and
 * which backend holds the value. This is what {@code secrets.json} lists and
 * {@code kosa8 secret ls} prints; the value itself is never part of it, so a
 * spec can be logged, printed and sent to the daemon freely.
 *
 * <p>The checks live in the constructor so that no invalid spec exists at all,
 * whether it comes from the command line or from a hand-edited catalog: the
 * header template ends up in real HTTP requests, and a CR/LF in it would let a
 * user (or a tampered file) smuggle extra headers.
 *
 * @param name   the secret's name, also the default {@code env}: {@code [A-Za-z_][A-Za-z0-9_]{0,63}}
 * @param host   the DNS name the secret may be sent to, lower case; no wildcard, no IP address
 * @param port   the port on that host, 443 unless given
 * @param header the header template, such as {@code Authorization: Bearer {}}; {@code {}} is the secret
 * @param env    the environment variable that holds the placeholder inside the sandbox
 * @param setAt  when the value was last set
 * @param store  the backend that holds the value: {@code file}, {@code secret-service} or {@code keychain}
 */
public record SecretSpec(String name, String host, int port, String header, String env, Instant setAt, String store) {
    public static final String DEFAULT_HEADER = "Authorization: Bearer {}";
    public static final int DEFAULT_PORT = 443;
    /** The backends a spec may name; see {@link SecretBackends}. */
    public static final Set<String> STORES = Set.of(FileSecretValues.ID, SecretServiceValues.ID, KeychainValues.ID);

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
    /** An HTTP field name: a token of RFC 9110, section 5.6.2. */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    /**
     * Headers that decide how a request is framed or routed. The broker owns
     * them; a secret placed in one would break the request at best and let it
     * be read as two at worst.
     */
    private static final Set<String> RESERVED = Set.of("host", "content-length", "transfer-encoding", "connection",
            "keep-alive", "proxy-connection", "te", "trailer", "upgrade");

    public SecretSpec {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bad secret name '" + name + "': use letters, digits and '_', "
                    + "not starting with a digit, at most 64 characters (e.g. OPENAI_API_KEY)");
        }
        host = checkHost(host);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad port " + port + ": it must be 1 to 65535");
        }
        header = header == null ? DEFAULT_HEADER : header;
        checkHeader(header);
        env = env == null ? name : env;
        if (!NAME.matcher(env).matches()) {
            throw new IllegalArgumentException("bad environment variable name '" + env + "': use letters, digits and"
                    + " '_', not starting with a digit, at most 64 characters");
        }
        if (setAt == null) {
            throw new IllegalArgumentException("a secret needs the time it was set");
        }
        if (store == null || !STORES.contains(store)) {
            throw new IllegalArgumentException("unknown secret store '" + store + "': it is one of "
                    + String.join(", ", STORES.stream().sorted().toList()));
        }
    }

    /**
     * A spec from what a user types: {@code hostAndPort} is {@code HOST} or
     * {@code HOST:PORT}; a null header or env takes the default.
     */
    public static SecretSpec of(String name, String hostAndPort, String header, String env, Instant setAt,
            String store) {
        if (hostAndPort == null || hostAndPort.isBlank()) {
            throw new IllegalArgumentException("a secret needs the host it is for (e.g. api.openai.com)");
        }
        String host = hostAndPort.strip();
        int port = DEFAULT_PORT;
        int colon = host.lastIndexOf(':');
        if (colon >= 0 && !host.endsWith("]") && host.indexOf(':') == colon) {
            String p = host.substring(colon + 1);
            if (!p.matches("[0-9]{1,5}")) {
                throw new IllegalArgumentException("bad port in '" + hostAndPort + "': write HOST or HOST:PORT");
            }
            port = Integer.parseInt(p);
            host = host.substring(0, colon);
        }
        return new SecretSpec(name, host, port, header, env, setAt, store);
    }

    /** The same spec held by another backend, set at another time. */
    public SecretSpec storedIn(String otherStore, Instant at) {
        return new SecretSpec(name, host, port, header, env, at, otherStore);
    }

    /** {@code host}, with {@code :port} when it is not 443: how users write it. */
    public String authority() {
        return port == DEFAULT_PORT ? host : host + ":" + port;
    }

    /** The header's name, such as {@code Authorization}. */
    public String headerName() {
        return header.substring(0, header.indexOf(": "));
    }

    /** The header's value with {@code secret} in place of {@code {}}. */
    public String headerValue(String secret) {
        String template = header.substring(header.indexOf(": ") + 2);
        int at = template.indexOf("{}");
        return template.substring(0, at) + secret + template.substring(at + 2);
    }

    private static String checkHost(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new IllegalArgumentException("a secret needs the host it is for (e.g. api.openai.com)");
        }
        if (raw.contains("*")) {
            throw new IllegalArgumentException("host '" + raw + "' has a wildcard: a secret goes to one host only, "
                    + "so name it exactly (e.g. api.openai.com)");
        }
        if (HostName.isAddressLiteral(raw)) {
            throw new IllegalArgumentException("host '" + raw + "' is an IP address: name the host instead, since "
                    + "the broker checks the name it connects to (e.g. api.openai.com)");
        }
        String host = HostName.normalize(raw);
        if (host == null) {
            throw new IllegalArgumentException("host '" + raw + "' is not a DNS name (e.g. api.openai.com)");
        }
        return host.toLowerCase(Locale.ROOT);
    }

    private static void checkHeader(String header) {
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("bad header '" + header.replaceAll("[^\\x20-\\x7e]", "?")
                        + "': only printable ASCII, no line breaks or control characters");
            }
        }
        int sep = header.indexOf(": ");
        if (sep <= 0 || !TOKEN.matcher(header.substring(0, sep)).matches()) {
            throw new IllegalArgumentException("bad header '" + header + "': write 'Name: value with {}', "
                    + "e.g. 'Authorization: Bearer {}' or 'x-api-key: {}'");
        }
        String name = header.substring(0, sep);
        if (RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("header '" + name + "' frames or routes the request and cannot carry "
                    + "a secret; use the header the API documents, e.g. 'Authorization: Bearer {}'");
        }
        String value = header.substring(sep + 2);
        int first = value.indexOf("{}");
        if (first < 0 || value.indexOf("{}", first + 1) >= 0) {
            throw new IllegalArgumentException("bad header '" + header + "': its value must have {} exactly once, "
                    + "where the secret goes, e.g. 'Authorization: Bearer {}'");
        }
        if (value.startsWith(" ") || value.endsWith(" ")) {
            throw new IllegalArgumentException("bad header '" + header + "': one space after the colon, none at the "
                    + "end");
        }
    }
}
