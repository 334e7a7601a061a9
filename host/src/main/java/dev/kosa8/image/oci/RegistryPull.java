package dev.kosa8.image.oci;

import com.google.cloud.tools.jib.api.CacheDirectoryCreationException;
import com.google.cloud.tools.jib.api.Containerizer;
import com.google.cloud.tools.jib.api.ImageReference;
import com.google.cloud.tools.jib.api.InvalidImageReferenceException;
import com.google.cloud.tools.jib.api.Jib;
import com.google.cloud.tools.jib.api.LogEvent;
import com.google.cloud.tools.jib.api.RegistryException;
import com.google.cloud.tools.jib.api.RegistryImage;
import com.google.cloud.tools.jib.api.TarImage;
import com.google.cloud.tools.jib.api.buildplan.Platform;
import com.google.cloud.tools.jib.frontend.CredentialRetrieverFactory;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * {@code kosa8 image pull}: an image from a registry (Docker Hub, GHCR, any
 * registry speaking the OCI distribution protocol), by tag or by digest, the
 * {@code linux/amd64} image of a manifest list, written as a {@code docker
 * save} archive that {@link ImageImport} then imports like any other. The
 * registry protocol, its token and basic auth, and Docker's own credentials
 * ({@code $DOCKER_CONFIG/config.json}, else {@code ~/.docker/config.json},
 * credential helpers included) are jib-core's. As Docker does, a registry on a
 * loopback address may be spoken to over plain HTTP; every other one only over
 * verified TLS.
 */
public final class RegistryPull {
    private RegistryPull() {
    }

    /** A reference as the user wrote it, parsed; a usage error naming it when it is not one. */
    static ImageReference reference(String ref) {
        try {
            return ImageReference.parse(ref);
        } catch (InvalidImageReferenceException e) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + ref + "' is not an image reference",
                    "write REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST, like ghcr.io/owner/tool:1 or busybox:1.36");
        }
    }

    /**
     * Whether commons-compress, under jib, said it has no zstd: zstd-jni, which kosa8 ships for it, could not load its
     * native library here (a platform it has none for, a temporary directory mounted noexec).
     */
    private static boolean causedByZstd(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains("Zstandard compression is not available")) {
                return true;
            }
        }
        return false;
    }

    /** The name a pulled image is listed under when none is given: its repository and tag (or digest's start). */
    public static String defaultName(String reference) {
        ImageReference ref = reference(reference);
        String repo = ref.getRepository().startsWith("library/") ? ref.getRepository().substring(8)
                : ref.getRepository();
        String tag = ref.getDigest().map(d -> d.replace(':', '-').substring(0, Math.min(d.length(), 19)))
                .orElse(ref.getTag().orElse("latest"));
        return repo.toLowerCase(java.util.Locale.ROOT) + ":" + tag;
    }

    /**
     * Pulls {@code ref} into {@code archive} ({@code docker save} form).
     *
     * @param cache        where jib keeps the layers it downloaded, for the next pull
     * @param dockerConfig Docker's {@code config.json} to take credentials from; null: {@code $DOCKER_CONFIG}'s,
     *                     else {@code ~/.docker/config.json}
     */
    public static void toArchive(String reference, Path archive, Path cache, Path dockerConfig,
                                 Consumer<String> log) {
        ImageReference ref = reference(reference);
        Consumer<LogEvent> events = e -> {
            if (e.getLevel() == LogEvent.Level.ERROR || e.getLevel() == LogEvent.Level.WARN
                    || e.getLevel() == LogEvent.Level.LIFECYCLE) {
                log.accept("pull " + ref + ": " + e.getMessage());
            }
        };
        CredentialRetrieverFactory creds = CredentialRetrieverFactory.forImage(ref, events);
        String env = System.getenv("DOCKER_CONFIG");
        Path config = dockerConfig != null ? dockerConfig : env != null ? Path.of(env, "config.json") : null;
        RegistryImage from = RegistryImage.named(ref).addCredentialRetriever(config != null
                ? creds.dockerConfig(config) : creds.dockerConfig());
        Containerizer to = Containerizer.to(TarImage.at(archive).named(reference("kosa8/pulled:latest")))
                .setToolName("kosa8")
                .setBaseImageLayersCache(cache.resolve("base"))
                .setApplicationLayersCache(cache.resolve("application"))
                .setAllowInsecureRegistries(isLoopback(ref.getRegistry()))
                .addEventHandler(LogEvent.class, events);
        try {
            Jib.from(from).setPlatforms(Set.of(new Platform("amd64", "linux"))).containerize(to);
        } catch (RegistryException | ExecutionException e) {
            Throwable why = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (causedByZstd(e)) {
                // jib-core reads each layer through commons-compress, whose zstd is zstd-jni's native library
                throw new KosaException(KosaException.Kind.IMAGE, "cannot pull " + ref + ": its layers are zstd,"
                        + " and zstd-jni, which reads them for the registry client, cannot load its native library"
                        + " here (" + java.util.Objects.requireNonNullElse(System.getProperty("os.arch"), "?")
                        + "; is the temporary directory mounted noexec?)",
                        "fetch it with skopeo and import that: skopeo copy docker://" + ref
                                + " oci-archive:image.tar && kosa8 image import image.tar", e);
            }
            throw new KosaException(KosaException.Kind.IMAGE, "cannot pull " + ref + ": " + why.getMessage(),
                    "check the name and tag, that the registry is reachable, and your credentials for it "
                            + "(`docker login` writes them where kosa8 reads them)", e);
        } catch (IOException | CacheDirectoryCreationException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "cannot pull " + ref + ": " + e.getMessage(),
                    "check the network and that kosa8's data folder has room", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.IMAGE, "the pull of " + ref + " was interrupted", "", e);
        }
    }

    /** Whether a registry ({@code host} or {@code host:port}) is on this machine's loopback. */
    static boolean isLoopback(String registry) {
        String host = registry.startsWith("[") ? registry.substring(1, registry.indexOf(']'))
                : registry.contains(":") ? registry.substring(0, registry.lastIndexOf(':')) : registry;
        if (host.equals("localhost")) {
            return true;
        }
        if (!host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            return false; // a name is never resolved for this: only a literal loopback address counts
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
