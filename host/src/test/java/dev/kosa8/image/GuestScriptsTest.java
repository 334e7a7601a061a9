package dev.kosa8.image;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class GuestScriptsTest {
    private static String resource(String name) throws Exception {
        try (var in = GuestScriptsTest.class.getResourceAsStream("/dev/kosa8/image/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void launcherPassesTheOptionsTheCdsArchiveWasDumpedWith() throws Exception {
        String launcher = resource("kosa8-agent.sh");
        assertThat(launcher).startsWith("#!/bin/sh\n").contains("-Xshare:auto")
                .contains("-cp /run/kosa8/agent.jar dev.kosa8.agent.AgentMain");
        for (String option : RootfsPart.CDS_DUMP_OPTIONS) {
            assertThat(launcher).contains(option);
        }
    }

    @Test
    void initReportsFailureAndProbeWithTheMarkersTheHostLooksFor() throws Exception {
        String init = resource("init.sh");
        assertThat(init).startsWith("#!/bin/busybox sh\n")
                .contains("KOSA8-INIT-FAILED: ", "echo \"KOSA8-PROBE-OK\" > /dev/console",
                        "exec switch_root /newroot /usr/bin/tini -s -- /run/kosa8/kosa8-agent",
                        "< /lib/modules/order");
    }

    @Test
    void theBuildersInitIsValidShAndSaysTheMarkersTheHostLooksFor() throws Exception {
        String init = resource("builder.sh");
        assertThat(init).startsWith("#!/kosa8/busybox sh\n")
                .contains("echo \"" + BuilderVm.OK + "\" > /dev/console", "echo \"" + BuilderVm.FAILED + " $*\"",
                        "disk kosa8-builder-root", "disk kosa8-builder-in", "disk kosa8-builder-out",
                        "disk kosa8-builder-back", "< /kosa8/modules/order", "/bin/sh -e /in/build.sh");
        Process p = new ProcessBuilder("sh", "-n", "-c", init).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
    }
}
