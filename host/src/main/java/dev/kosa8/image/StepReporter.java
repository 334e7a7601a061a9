package dev.kosa8.image;

import java.time.Duration;

/** Announces the next step of the part being made. */
@FunctionalInterface
interface StepReporter {
    void begin(String description, Duration estimate);
}
