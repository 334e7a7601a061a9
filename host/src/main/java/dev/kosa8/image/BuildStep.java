package dev.kosa8.image;

import java.time.Duration;

/**
 * One step of an image build, as the CLI shows it:
 * {@code [2/5] root filesystem: mmdebstrap bookworm (about 30 s)}.
 *
 * @param estimate how long the step usually takes here; zero when it is quick
 */
public record BuildStep(int index, int total, String part, String description, Duration estimate) {

    public BuildStep {
        if (index < 1 || index > total) {
            throw new IllegalArgumentException("step " + index + " of " + total);
        }
    }

    public String line() {
        String about = estimate.isZero() ? "" : " (about " + estimate.toSeconds() + " s)";
        return "[" + index + "/" + total + "] " + part + ": " + description + about;
    }

    @Override
    public String toString() {
        return line();
    }
}
