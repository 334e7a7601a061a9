package dev.kosa8.egress.tls;

import io.netty.handler.ssl.SslContext;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A sandbox's own certificate authority, with which the egress broker
 * terminates the guest's TLS: the guest trusts this CA, and for each host name
 * it connects to the broker presents a leaf certificate for that name alone.
 *
 * <p><b>The CA key never leaves the host.</b> It lives in {@code ca.key} (mode
 * 0600) in the sandbox's directory and in this object; no method returns it or
 * its PEM. Only the certificate ({@link #certificatePem()}) goes to the guest.
 * Whoever holds the key can impersonate any site to the guest's programs; only
 * the broker should, and only for names it intercepts. The guest is the
 * untrusted side, so the key stays out of it and out of everything that could
 * carry it there or elsewhere: the API, logs, guest snapshots.
 *
 * <p><b>One leaf key per CA.</b> All leaves of one CA share one EC P-256 key pair,
 * made when this object is made and kept in memory only. Minting a leaf is then a
 * single ECDSA signature instead of a key generation. Separate keys would isolate
 * nothing: they would all sit in this one process, trusted by this one guest.
 *
 * <p>Leaves are cached, least recently used first out, up to 1024 names, each
 * with its Netty server context, and are minted again when less than a day of
 * their 90 days remains. Thread-safe.
 */
public final class SandboxCa {
    static final int CACHE_CAPACITY = 1024;
    static final Duration LEAF_BACKDATE = Duration.ofHours(1);
    static final Duration LEAF_LIFETIME = Duration.ofDays(90);
    static final Duration RENEW_BEFORE = Duration.ofDays(1);
    private static final Duration CA_BACKDATE = Duration.ofDays(1);
    private static final int CA_LIFETIME_YEARS = 10;
    private static final Pattern SANDBOX_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /** Makes two concurrent creations of one directory's CA impossible in this process. */
    private static final Object CREATION = new Object();

    private final PrivateKey caKey;
    private final X509Certificate certificate;
    private final String certificatePem;
    private final KeyPair leafKeys;
    private final Clock clock;
    private final SecureRandom random;
    private final Map<DnsName, Cached> leaves;

    /** A cached leaf and, once asked for, its server contexts (HTTP/1.1 only; HTTP/2 and HTTP/1.1). */
    private record Cached(LeafCertificate leaf, SslContext context, SslContext http2Context) {
    }

    private SandboxCa(CaFiles.Stored ca, Clock clock, SecureRandom random, int capacity) {
        this.caKey = ca.key();
        this.certificate = ca.certificate();
        this.certificatePem = CaFiles.pem(certificate);
        this.clock = clock;
        this.random = random;
        this.leafKeys = CertificateMinter.newP256KeyPair(random);
        this.leaves = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<DnsName, Cached> eldest) {
                return size() > capacity;
            }
        };
    }

    /**
     * Loads the CA kept in {@code dir} ({@code ca.key} and {@code ca.pem}), or makes
     * one there if {@code ca.pem} does not exist yet.
     *
     * @throws dev.kosa8.host.KosaException when the files exist but cannot be
     *     used (damaged, mismatched, key readable by others). They are never
     *     replaced silently, since the guest may already trust the certificate;
     *     the message names the file and says to delete the CA files.
     */
    public static SandboxCa loadOrCreate(Path dir, String sandboxId) {
        return loadOrCreate(dir, sandboxId, Clock.systemUTC(), CACHE_CAPACITY);
    }

    static SandboxCa loadOrCreate(Path dir, String sandboxId, Clock clock, int capacity) {
        if (sandboxId == null || !SANDBOX_ID.matcher(sandboxId).matches()) {
            throw new IllegalArgumentException("bad sandbox id: " + sandboxId);
        }
        SecureRandom random = new SecureRandom();
        synchronized (CREATION) {
            CaFiles.Stored ca = CaFiles.read(dir).orElseGet(() -> {
                CaFiles.Stored made = create(sandboxId, clock.instant(), random);
                CaFiles.write(dir, made);
                return made;
            });
            return new SandboxCa(ca, clock, random, capacity);
        }
    }

    private static CaFiles.Stored create(String sandboxId, Instant now, SecureRandom random) {
        KeyPair keys = CertificateMinter.newP256KeyPair(random);
        Instant notAfter = now.atOffset(ZoneOffset.UTC).plusYears(CA_LIFETIME_YEARS).toInstant();
        X509Certificate cert = CertificateMinter.selfSignedCa(keys, sandboxId, now.minus(CA_BACKDATE), notAfter, random);
        return new CaFiles.Stored(keys.getPrivate(), cert);
    }

    /** The CA certificate the guest must trust. */
    public X509Certificate certificate() {
        return certificate;
    }

    /** The CA certificate as PEM, to install in the guest's trust store. */
    public String certificatePem() {
        return certificatePem;
    }

    /**
     * The leaf certificate for {@code hostName}, minted on first use and cached.
     *
     * @throws IllegalArgumentException unless {@code hostName} is a DNS host name
     *     (case is ignored): no wildcard, no IP address, labels of 1 to 63
     *     letters, digits or '-', 253 characters at most
     */
    public LeafCertificate leafFor(String hostName) {
        DnsName name = new DnsName(hostName);
        synchronized (leaves) {
            return current(name).leaf();
        }
    }

    /**
     * The Netty server context presenting {@link #leafFor(String) leafFor(hostName)},
     * built once per leaf. The first time a name is seen, minting and building take
     * one or two milliseconds, under this CA's lock.
     */
    public SslContext serverContextFor(String hostName) {
        DnsName name = new DnsName(hostName);
        synchronized (leaves) {
            Cached e = current(name);
            if (e.context() == null) {
                e = new Cached(e.leaf(), e.leaf().serverContext(), e.http2Context());
                leaves.put(name, e);
            }
            return e.context();
        }
    }

    /** As {@link #serverContextFor}, offering ALPN h2 before http/1.1 ({@link LeafCertificate#http2ServerContext}). */
    public SslContext http2ServerContextFor(String hostName) {
        DnsName name = new DnsName(hostName);
        synchronized (leaves) {
            Cached e = current(name);
            if (e.http2Context() == null) {
                e = new Cached(e.leaf(), e.context(), e.leaf().http2ServerContext());
                leaves.put(name, e);
            }
            return e.http2Context();
        }
    }

    /** The cached entry for {@code name}, minted again when absent or about to expire. Holds the lock. */
    private Cached current(DnsName name) {
        Instant now = clock.instant();
        Cached e = leaves.get(name);
        if (e == null || e.leaf().leaf().getNotAfter().toInstant().isBefore(now.plus(RENEW_BEFORE))) {
            e = new Cached(mint(name, now), null, null);
            leaves.put(name, e);
        }
        return e;
    }

    private LeafCertificate mint(DnsName name, Instant now) {
        Instant notAfter = now.plus(LEAF_LIFETIME);
        Instant caNotAfter = certificate.getNotAfter().toInstant();
        if (notAfter.isAfter(caNotAfter)) {
            notAfter = caNotAfter;
        }
        X509Certificate leaf = CertificateMinter.leaf(name, leafKeys.getPublic(), certificate, caKey,
                now.minus(LEAF_BACKDATE), notAfter, random);
        return new LeafCertificate(leafKeys.getPrivate(), leaf, certificate);
    }

    @Override
    public String toString() {
        return "SandboxCa[" + certificate.getSubjectX500Principal().getName() + "]";
    }
}
