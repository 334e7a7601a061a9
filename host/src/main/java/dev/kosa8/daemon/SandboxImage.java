package dev.kosa8.daemon;

import dev.kosa8.image.ImageConfig;
import dev.kosa8.image.NamedImage;
import dev.kosa8.vm.GuestArch;

/**
 * The image a sandbox was made from: its name as asked for, its config
 * as it was when the sandbox was made (an image rebuilt under the same name
 * later changes neither the sandbox's disk nor how its commands run), and the
 * guest's architecture (records from before architectures load as this host's).
 */
public record SandboxImage(String name, ImageConfig config,
                           @com.fasterxml.jackson.annotation.JsonInclude(value = com.fasterxml.jackson.annotation
                                   .JsonInclude.Include.CUSTOM, valueFilter = HostArch.class) GuestArch arch) {
    public static final SandboxImage DEFAULT = new SandboxImage(NamedImage.DEFAULT, ImageConfig.NONE);

    public SandboxImage {
        name = name == null || name.isEmpty() ? NamedImage.DEFAULT : name;
        config = config == null ? ImageConfig.NONE : config;
        arch = arch == null ? GuestArch.host() : arch;
    }

    /** An image of this host's architecture. */
    public SandboxImage(String name, ImageConfig config) {
        this(name, config, null);
    }

    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean isDefault() {
        return name.equals(NamedImage.DEFAULT);
    }

    /**
     * For the sandbox record: the host's architecture is left out, so a record is written as before architectures
     * (and a kosa8 from before them still reads it). Jackson calls {@code equals} and leaves it out when true.
     */
    static final class HostArch {
        @Override
        public boolean equals(Object value) {
            return value == null || value == GuestArch.host();
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }

    /**
     * For the sandbox record: kosa8's own image is left out, so a record of such a sandbox is written exactly as
     * before images had names. Jackson calls {@code equals} with the value and leaves it out when true.
     */
    static final class LeftOutWhenDefault {
        @Override
        public boolean equals(Object value) {
            return value == null || DEFAULT.equals(value);
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }
}
