package dev.kosa8.image;

import java.util.regex.Pattern;

/**
 * An image a user built or imported, under the name they gave it
 * ({@code images/named/NAME/image.json}): its root disk (the last layer of
 * its build's chain), the system image whose kernel and initramfs boot it,
 * and the config its commands run with.
 *
 * @param name        as the user wrote it: {@code app}, {@code team/tool:1.2}
 * @param id          16 hex digits: the start of its last step's key, so the same build under two names is one id
 * @param step        its last build step's key
 * @param disk        its root disk, absolute (a qcow2 whose chain ends at the system image's root disk)
 * @param systemImage the system image whose kernel and initramfs boot it
 * @param base        the FROM it was built from, as the Dockerfile resolved it
 * @param config      env, working directory, user, entrypoint, command, labels
 * @param created     ISO-8601
 * @param sizeBytes   the bytes its own layers take (those of its build, not the base's)
 */
public record NamedImage(String name, String id, String step, String disk, String systemImage, String base,
                         ImageConfig config, String created, long sizeBytes) {
    /** The name kosa8's own image goes by: today's default. */
    public static final String DEFAULT = "kosa8/debian";
    private static final Pattern NAME = Pattern.compile(
            "[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?");

    public NamedImage {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("not an image name: " + name);
        }
    }

    /** Lower-case path elements separated by '/', each of letters, digits and inner '.', '_', '-'; an optional :tag. */
    public static boolean isValidName(String name) {
        return name != null && name.length() <= 255 && NAME.matcher(name).matches();
    }

    /** The directory a name is kept in: '/' and ':' are not in file names. */
    static String directoryName(String name) {
        return name.replace("/", "+").replace(":", "@");
    }
}
