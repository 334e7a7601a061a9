package dev.kosa8.daemon;

import dev.kosa8.egress.tls.HostCas;
import dev.kosa8.egress.tls.SandboxCa;
import dev.kosa8.image.JavaTrustStore;
import dev.kosa8.vm.AgentConnection;
import dev.kosa8.vm.GuestCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Puts a sandbox's CA in every place the guest's clients look for trusted
 * certificates: the PEM that
 * {@code NODE_EXTRA_CA_CERTS} names, the local CA directory with the link
 * {@code update-ca-certificates} would make (so Debian's tools, such as
 * {@code ca-certificates-java} installing a JDK later, carry it on), the
 * system bundle rebuilt from the image's own, and the Java trust store
 * (made here from the image's bundle, {@link JavaTrustStore}).
 *
 * <p>Run after a cold boot with a network (the guest's init has done the PEM
 * part from the kernel command line; Java's store needs the host) and after a
 * start from a template (whose guest trusted the template's CA). A template
 * runs the script once for its own CA ({@link #layOut}), so a sandbox made
 * from it needs only the four files' contents replaced, which the agent writes
 * without starting a process; the script stays for cold boots, templates made
 * before, and as the fallback when writing the files fails.
 */
final class GuestTrust {
    /** Where the host's CAs go when the sandbox trusts them, as {@code update-ca-certificates} reads local CAs. */
    static final String HOST_CAS = "/usr/local/share/ca-certificates/kosa8-host.crt";

    /**
     * {@code $1} is the certificate's DER in base64, as on the kernel command line; {@code $2} the host's CAs as
     * PEM, or empty when the sandbox does not trust them; stdin is the Java store.
     */
    static final String SCRIPT = """
            set -e
            { echo "-----BEGIN CERTIFICATE-----"; echo "$1" | fold -w 64; echo "-----END CERTIFICATE-----"; } \\
              > /etc/kosa8/ca.pem.new
            mkdir -p /usr/local/share/ca-certificates
            cp /etc/kosa8/ca.pem.new /usr/local/share/ca-certificates/kosa8-sandbox.crt
            ln -sfn /usr/local/share/ca-certificates/kosa8-sandbox.crt /etc/ssl/certs/kosa8-sandbox.pem
            if [ -n "$2" ]; then
              printf '%s' "$2" > /usr/local/share/ca-certificates/kosa8-host.crt
              ln -sfn /usr/local/share/ca-certificates/kosa8-host.crt /etc/ssl/certs/kosa8-host.pem
              printf '%s' "$2" >> /etc/kosa8/ca.pem.new
            else
              rm -f /usr/local/share/ca-certificates/kosa8-host.crt /etc/ssl/certs/kosa8-host.pem
            fi
            mv /etc/kosa8/ca.pem.new /etc/kosa8/ca.pem
            cat /etc/kosa8/system-ca.crt /etc/kosa8/ca.pem > /etc/ssl/certs/ca-certificates.crt.kosa8
            mv /etc/ssl/certs/ca-certificates.crt.kosa8 /etc/ssl/certs/ca-certificates.crt
            mkdir -p /etc/ssl/certs/java
            cat > /etc/ssl/certs/java/cacerts.kosa8
            if [ -s /etc/ssl/certs/java/cacerts.kosa8 ]; then
              mv /etc/ssl/certs/java/cacerts.kosa8 /etc/ssl/certs/java/cacerts
            else
              rm /etc/ssl/certs/java/cacerts.kosa8
            fi
            """;

    private final Map<Path, List<X509Certificate>> systems = new ConcurrentHashMap<>();
    private final Consumer<String> log;

    GuestTrust(Consumer<String> log) {
        this.log = log;
    }

    /**
     * Installs {@code ca}, and the host's CAs when the sandbox trusts them, in the guest, or throws naming what
     * failed. The host's CAs join the PEM that {@code NODE_EXTRA_CA_CERTS} names, the system bundle, the Java
     * store and the local CA directory (as {@value #HOST_CAS}), so every client trusts what the host's do.
     *
     * @param hostCas the host's CAs, or {@link HostCas#NONE}
     * @param laidOut the guest already has the directories and the link the script makes (it ran there before: a
     *                guest restored from a template that {@link #layOut} prepared), so writing the files is enough
     */
    void install(AgentConnection agent, SandboxCa ca, HostCas hostCas, BootImage image, boolean laidOut,
                 Duration timeout) {
        X509Certificate cert = ca.certificate();
        byte[] store = javaStore(image.systemCertificates(), cert, hostCas);
        if (laidOut) {
            try {
                writeFiles(agent, cert, hostCas, store, image, timeout);
                return;
            } catch (IOException | RuntimeException e) {
                log.accept("writing the sandbox CA's files failed (" + e.getMessage() + "); running the script");
            }
        }
        runScript(agent, cert, hostCas, store, timeout);
    }

    /**
     * For a template: the script with the template's own CA (it makes the directories and the link), then the files
     * written as every sandbox of the template will write them, so that the agent's code for it is warm in each
     * (the template's JVM is theirs). A template made so is {@code laidOut} for {@link #install}.
     *
     * @return whether it was laid out; false for an image that kept no CA bundle beside its disk (made before it
     *         did) or when writing the files failed (said in the log), whose sandboxes then run the script
     */
    boolean layOut(AgentConnection agent, SandboxCa ca, BootImage image, Duration timeout) {
        X509Certificate cert = ca.certificate();
        byte[] store = javaStore(image.systemCertificates(), cert, HostCas.NONE);
        runScript(agent, cert, HostCas.NONE, store, timeout);
        if (!Files.isRegularFile(image.systemCertificates())) {
            return false;
        }
        try {
            writeFiles(agent, cert, HostCas.NONE, store, image, timeout);
            return true;
        } catch (IOException | RuntimeException e) {
            log.accept("the template's CA files could not be written (" + e.getMessage() + "); its sandboxes will"
                    + " run the script");
            return false;
        }
    }

    /**
     * What the script does, as four files written by the agent, without starting a process: after a restore
     * under TCG, in a fresh QEMU, the script's ten or so process starts took 0.6-1.3 s of every create
     * (bench/history/undo.md, run 14). The bundle is made here from the image's own, which the guest's
     * {@code /etc/kosa8/system-ca.crt} is a copy of.
     */
    private static void writeFiles(AgentConnection agent, X509Certificate cert, HostCas hostCas, byte[] store,
                                   BootImage image, Duration timeout) throws IOException {
        GuestCommand.putFiles(agent, files(cert, hostCas, store, Files.readAllBytes(image.systemCertificates())),
                timeout);
    }

    /**
     * The files {@link #SCRIPT} writes, as the agent writes them: the sandbox CA (and the host's CAs when given)
     * for {@code NODE_EXTRA_CA_CERTS}, the local CA directory, the system bundle ({@code system} and them) and the
     * Java store when there is one.
     */
    static List<GuestCommand.GuestFile> files(X509Certificate cert, HostCas hostCas, byte[] store, byte[] system) {
        byte[] own = pem(cert);
        byte[] pem = concat(own, hostCas.pem());
        List<GuestCommand.GuestFile> files = new ArrayList<>(List.of(
                new GuestCommand.GuestFile("/etc/kosa8/ca.pem", 0644, pem),
                new GuestCommand.GuestFile("/usr/local/share/ca-certificates/kosa8-sandbox.crt", 0644, own),
                new GuestCommand.GuestFile("/etc/ssl/certs/ca-certificates.crt", 0644, concat(system, pem))));
        if (!hostCas.isEmpty()) {
            // no link in /etc/ssl/certs as the script makes: update-ca-certificates makes it on its next run
            files.add(new GuestCommand.GuestFile(HOST_CAS, 0644, hostCas.pem()));
        }
        if (store.length > 0) {
            files.add(new GuestCommand.GuestFile("/etc/ssl/certs/java/cacerts", 0644, store));
        }
        return files;
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static void runScript(AgentConnection agent, X509Certificate cert, HostCas hostCas, byte[] store,
                                  Duration timeout) {
        GuestCommand.Result r = GuestCommand.run(agent, List.of("sh", "-c", SCRIPT, "kosa8-ca", der(cert),
                new String(hostCas.pem(), StandardCharsets.US_ASCII)), store, timeout);
        if (r.exitCode() != 0) {
            throw new IllegalStateException("cannot install the sandbox's CA in the guest: " + r.stderr().strip());
        }
    }

    /** The certificate as the script and the guest's init write it: base64 lines of 64 between the markers. */
    static byte[] pem(X509Certificate cert) {
        return HostCas.pem(cert);
    }

    private static String der(X509Certificate cert) {
        return Base64.getEncoder().encodeToString(encoded(cert));
    }

    private static byte[] encoded(X509Certificate cert) {
        try {
            return cert.getEncoded();
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode the sandbox CA's certificate", e);
        }
    }

    /**
     * The Java trust store for the guest, or an empty array (the guest's store
     * is left as it is) for an image that kept no bundle: an image built
     * before it did, whose runtime keeps the JDK's own store anyway.
     */
    private byte[] javaStore(Path bundle, X509Certificate ca, HostCas hostCas) {
        List<X509Certificate> system = systems.computeIfAbsent(bundle, b -> {
            try {
                return JavaTrustStore.readPem(Files.readAllBytes(b));
            } catch (NoSuchFileException e) {
                log.accept("the image keeps no CA bundle (" + b + "); Java programs in its sandboxes will not trust "
                        + "the sandbox CA until the image is rebuilt (`kosa8 image build`)");
                return List.of();
            } catch (IOException | CertificateException e) {
                throw new IllegalStateException("cannot read the image's CA bundle " + b + ": " + e.getMessage(), e);
            }
        });
        return system.isEmpty() ? new byte[0] : JavaTrustStore.pkcs12(system, ca, hostCas.certificates());
    }
}
