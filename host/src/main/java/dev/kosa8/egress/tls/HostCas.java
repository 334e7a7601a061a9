package dev.kosa8.egress.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CA certificates added to this machine's trust locally, beyond the
 * distribution's bundle: a company's own CA, or the CA of a TLS-inspecting
 * proxy, which every client behind that proxy must trust. A sandbox that
 * trusts the host's CAs ({@code --trust-host-cas}) gets these in all its
 * trust stores, and its broker trusts them when it verifies an upstream.
 *
 * <p>Read from the directories where each family of distributions keeps
 * locally added CAs ({@link #LOCAL_DIRECTORIES}; {@code .crt} and {@code .pem}
 * files, as {@code update-ca-certificates} and {@code update-ca-trust} read
 * them) and from files the user's network settings name. A file that holds no
 * certificate is left out and said in {@link #problems}; the rest still count.
 *
 * @param certificates each certificate once, in the order found (directories sorted by name)
 * @param files        the files they came from
 * @param problems     files that could not be read, each with why
 */
public record HostCas(List<X509Certificate> certificates, List<Path> files, List<String> problems) {
    /** Debian and Ubuntu; Fedora, RHEL and SUSE; Arch. */
    public static final List<Path> LOCAL_DIRECTORIES = List.of(Path.of("/usr/local/share/ca-certificates"),
            Path.of("/etc/pki/ca-trust/source/anchors"), Path.of("/etc/ca-certificates/trust-source/anchors"));
    public static final HostCas NONE = new HostCas(List.of(), List.of(), List.of());
    /** No sane set of local CAs is larger; a directory holding more is read no further. */
    static final int MAX_FILES = 256;
    static final long MAX_FILE_BYTES = 1 << 20;

    public HostCas {
        certificates = List.copyOf(certificates);
        files = List.copyOf(files);
        problems = List.copyOf(problems);
    }

    /** The host's locally added CAs: {@link #LOCAL_DIRECTORIES} and the {@code extra} files. */
    public static HostCas local(List<Path> extra) {
        return read(LOCAL_DIRECTORIES, extra);
    }

    /** The certificates in the {@code .crt}/{@code .pem} files below {@code directories}, then in {@code files}. */
    public static HostCas read(List<Path> directories, List<Path> files) {
        List<Path> found = new ArrayList<>();
        for (Path dir : directories) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(dir, 4)) {
                walk.filter(p -> {
                    String n = p.getFileName().toString();
                    return (n.endsWith(".crt") || n.endsWith(".pem")) && Files.isRegularFile(p);
                }).sorted().limit(MAX_FILES).forEach(found::add);
            } catch (IOException | java.io.UncheckedIOException e) {
                // an unreadable directory adds nothing; its files are not ours to insist on
            }
        }
        found.addAll(files);
        Map<String, X509Certificate> certs = new LinkedHashMap<>();
        List<Path> used = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Path f : found) {
            try {
                if (Files.size(f) > MAX_FILE_BYTES) {
                    problems.add(f + ": larger than " + MAX_FILE_BYTES + " bytes");
                    continue;
                }
                List<X509Certificate> in = parse(Files.readAllBytes(f));
                if (in.isEmpty()) {
                    problems.add(f + ": holds no certificate");
                    continue;
                }
                used.add(f);
                for (X509Certificate c : in) {
                    certs.putIfAbsent(Base64.getEncoder().encodeToString(c.getEncoded()), c);
                }
            } catch (java.nio.file.NoSuchFileException e) {
                problems.add(f + ": no such file");
            } catch (IOException | CertificateException e) {
                problems.add(f + ": " + e.getMessage());
            }
        }
        return new HostCas(List.copyOf(certs.values()), used, problems);
    }

    private static List<X509Certificate> parse(byte[] bytes) throws CertificateException {
        List<X509Certificate> out = new ArrayList<>();
        for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(bytes))) {
            out.add((X509Certificate) c);
        }
        return out;
    }

    public boolean isEmpty() {
        return certificates.isEmpty();
    }

    /** The certificates as PEM, one block each, in order. */
    public byte[] pem() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (X509Certificate c : certificates) {
            out.writeBytes(pem(c));
        }
        return out.toByteArray();
    }

    /** One certificate as PEM: base64 lines of 64 between the markers, as {@code openssl} writes it. */
    public static byte[] pem(X509Certificate cert) {
        try {
            String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(cert.getEncoded());
            return ("-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n")
                    .getBytes(StandardCharsets.US_ASCII);
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode the certificate of " + cert.getSubjectX500Principal(), e);
        }
    }

    /** Says what was found, for {@code kosa8 net}: how many certificates from which files. */
    public String describe() {
        if (certificates.isEmpty()) {
            return "no locally added CA certificates found (looked in " + String.join(", ",
                    LOCAL_DIRECTORIES.stream().map(Path::toString).toList()) + ")";
        }
        return certificates.size() + " certificate" + (certificates.size() == 1 ? "" : "s") + " from "
                + String.join(", ", files.stream().map(Path::toString).toList());
    }
}
