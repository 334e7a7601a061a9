package dev.kosa8.agent;

/**
 * PLACEHOLDER, to be replaced by the real agent: lets the image builder's
 * hand-boot check show the guest's JVM starts.
 */
public final class AgentMain {
    private AgentMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("KOSA8-AGENT-PLACEHOLDER java " + Runtime.version()
                + " pid " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
