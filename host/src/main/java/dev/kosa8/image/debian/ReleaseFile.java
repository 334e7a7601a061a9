package dev.kosa8.image.debian;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The signed {@code Release} text of a suite (from {@code InRelease}, after
 * its signature was verified): its names, dates, and the SHA-256 and size of
 * every index file, which is what ties each {@code Packages} file to the
 * signature.
 */
public record ReleaseFile(String suite, String codename, Instant date, Optional<Instant> validUntil,
                          List<String> architectures, List<String> components, Map<String, FileHash> sha256) {
    private static final Pattern HASH_LINE = Pattern.compile("([0-9a-fA-F]{64})\\s+([0-9]{1,15})\\s+(\\S+)");
    private static final DateTimeFormatter RFC_1123 = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT);

    /** The expected SHA-256 and size of one file the Release lists. */
    public record FileHash(String sha256, long size) {
    }

    public ReleaseFile {
        architectures = List.copyOf(architectures);
        components = List.copyOf(components);
        sha256 = Map.copyOf(sha256);
    }

    /** Reads the verified text of an InRelease; a Release without SHA256 sums is refused. */
    public static ReleaseFile parse(String text) {
        List<Stanza> stanzas = Stanzas.parse(text, "the Release file");
        if (stanzas.size() != 1) {
            throw ArchiveErrors.malformed("the Release file has " + stanzas.size() + " paragraphs, not one");
        }
        Stanza s = stanzas.getFirst();
        Map<String, FileHash> sums = new LinkedHashMap<>();
        for (String line : s.required("SHA256", "the Release file").split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            var m = HASH_LINE.matcher(line.strip());
            if (!m.matches()) {
                throw ArchiveErrors.malformed("the Release file's SHA256 line '" + shorten(line) + "'");
            }
            sums.put(m.group(3), new FileHash(m.group(1).toLowerCase(Locale.ROOT), Long.parseLong(m.group(2))));
        }
        return new ReleaseFile(s.field("Suite").orElse(""), s.field("Codename").orElse(""),
                date(s.required("Date", "the Release file"), "Date"),
                s.field("Valid-Until").map(v -> date(v, "Valid-Until")),
                words(s.field("Architectures").orElse("")), words(s.field("Components").orElse("")), sums);
    }

    /** The listed hash of {@code path} (like {@code main/binary-amd64/Packages.xz}), or a refusal. */
    public FileHash hashOf(String path) {
        FileHash h = sha256.get(path);
        if (h == null) {
            throw ArchiveErrors.unverified("the signed Release of " + codename + " lists no SHA-256 for " + path);
        }
        return h;
    }

    /**
     * Refuses a Release that is not the suite asked for (a mirror serving
     * another suite's signed file under this name) or whose Valid-Until has
     * passed (a replayed old file).
     */
    public void check(String wantedSuite, Instant now) {
        if (!wantedSuite.equals(codename) && !wantedSuite.equals(suite)) {
            throw ArchiveErrors.unverified("asked for the suite " + wantedSuite + " but the signed Release is "
                    + codename + " (" + suite + ")");
        }
        if (validUntil.isPresent() && now.isAfter(validUntil.get())) {
            throw ArchiveErrors.unverified("the signed Release of " + wantedSuite + " expired at " + validUntil.get()
                    + " (a stale mirror, or an old file replayed)");
        }
    }

    private static Instant date(String v, String field) {
        try {
            // Debian writes "Sat, 11 Jul 2026 10:16:37 UTC"; RFC 1123 wants GMT or an offset
            return ZonedDateTime.parse(v.strip().replaceFirst(" UTC$", " GMT"), RFC_1123).toInstant();
        } catch (DateTimeParseException e) {
            throw ArchiveErrors.malformed("the Release file's " + field + " '" + shorten(v) + "'");
        }
    }

    private static List<String> words(String v) {
        return v.isBlank() ? List.of() : List.of(v.strip().split("\\s+"));
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }
}
