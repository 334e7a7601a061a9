package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KernelModulesTest {
    @TempDir
    Path tree;

    @Test
    void loadOrderPutsEveryModuleAfterWhatItNeeds() {
        List<String> order = KernelModules.ORDER;
        assertThat(order).doesNotHaveDuplicates().hasSize(26);
        // from modules.dep of linux-image-6.1.0-*-amd64 (depmod -b DIR VERSION on the unpacked package)
        String[][] needs = {
                {"virtio_mmio", "virtio_ring"}, {"virtio_mmio", "virtio"}, {"virtio_blk", "virtio_ring"},
                {"virtio_pci", "virtio_pci_legacy_dev"}, {"virtio_pci", "virtio_pci_modern_dev"},
                {"virtio_net", "net_failover"}, {"net_failover", "failover"},
                {"9pnet_virtio", "9pnet"}, {"9pnet_fd", "9pnet"}, {"9p", "9pnet"}, {"9p", "netfs"}, {"9p", "fscache"},
                {"fscache", "netfs"}, {"vmw_vsock_virtio_transport", "vmw_vsock_virtio_transport_common"},
                {"vmw_vsock_virtio_transport_common", "vsock"},
                {"ext4", "jbd2"}, {"ext4", "mbcache"}, {"ext4", "crc16"}, {"ext4", "crc32c_generic"}};
        for (String[] n : needs) {
            assertThat(order.indexOf(n[0])).as(n[0] + " after " + n[1]).isGreaterThan(order.indexOf(n[1]));
        }
    }

    @Test
    void resolvesModulesInTheGivenOrderWhateverTheirFolderOrCompression() throws IOException {
        module("kernel/fs/ext4/ext4.ko", "ext4");
        module("kernel/crypto/crc32c_generic.ko", "crc");
        Files.createDirectories(tree.resolve("kernel/drivers/virtio"));
        Files.write(tree.resolve("kernel/drivers/virtio/virtio_ring.ko.xz"),
                TestKernels.xz("ring".getBytes(StandardCharsets.UTF_8)));

        List<KernelModules.Module> modules = KernelModules.resolve(tree, List.of("virtio_ring", "crc32c_generic", "ext4"));

        assertThat(modules).extracting(KernelModules.Module::name).containsExactly("virtio_ring", "crc32c_generic", "ext4");
        assertThat(KernelModules.objectBytes(modules.getFirst().file())).asString().isEqualTo("ring");
    }

    @Test
    void treatsDashesAndUnderscoresAlikeAndSkipsBuiltInModules() throws IOException {
        module("kernel/net/vmw_vsock/vmw-vsock-x.ko", "x");
        Files.writeString(tree.resolve("modules.builtin"), "kernel/lib/crc16.ko\n");

        assertThat(KernelModules.resolve(tree, List.of("crc16", "vmw_vsock_x")))
                .extracting(KernelModules.Module::name).containsExactly("vmw_vsock_x");
    }

    @Test
    void namesEveryMissingModule() throws IOException {
        module("kernel/fs/ext4/ext4.ko", "ext4");

        assertThatThrownBy(() -> KernelModules.resolve(tree, List.of("9p", "ext4", "vsock")))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("no module 9p, vsock");
    }

    @Test
    void theInitramfsListsModulesInLoadOrder() {
        Map<String, byte[]> modules = new LinkedHashMap<>();
        for (String m : List.of("virtio_ring", "virtio", "crc32c_generic", "ext4")) {
            modules.put(m, new byte[] {1});
        }
        GuestFiles guest = new GuestFiles(new byte[] {'i'}, new byte[] {'l'}, new byte[] {'j'}, new byte[] {'g'});

        List<CpioArchive.Entry> entries = InitramfsPart.entries(new byte[] {'b'}, modules, guest);

        CpioArchive.RegularFile order = entries.stream()
                .filter(e -> e.path().equals("lib/modules/order")).map(CpioArchive.RegularFile.class::cast)
                .findFirst().orElseThrow();
        assertThat(new String(order.content(), StandardCharsets.UTF_8)).isEqualTo("virtio_ring\nvirtio\ncrc32c_generic\next4\n");
        assertThat(entries).extracting(CpioArchive.Entry::path)
                .contains("init", "bin/busybox", "dev/console", "kosa8/agent.jar", "kosa8/kosa8-agent",
                        "lib/modules/ext4.ko", "newroot");
    }

    private void module(String path, String content) throws IOException {
        Path p = tree.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }
}
