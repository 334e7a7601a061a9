package dev.kosa8.image;

/**
 * One committed build step ({@code steps/KEY/step.json}): which step, what
 * it ends with, and the image's config after it.
 *
 * @param key          SHA-256 of the parent's key, the instruction with its variables substituted, and the files it
 *                     reads ({@link StepStore#key})
 * @param parent       the step before, empty for a base
 * @param text         the instruction as written
 * @param disk         the root disk the step ends with, absolute: its own layer, or the disk before it when it
 *                     changed only the config
 * @param systemImage  the kosa8 system image whose kernel and initramfs boot it (and whose root disk the chain
 *                     begins at, for kosa8/debian)
 * @param config       the image's config after the step
 * @param created      when it was made, ISO-8601
 * @param seconds      how long it took
 */
public record StepRecord(String key, String parent, String text, String disk, String systemImage,
                         ImageConfig config, String created, double seconds) {
}
