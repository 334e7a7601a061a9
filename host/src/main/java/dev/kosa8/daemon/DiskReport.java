package dev.kosa8.daemon;

import dev.kosa8.image.Image;
import dev.kosa8.image.ImageStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kosa8 df}: what kosa8 keeps on the host's disk, per sandbox (its
 * disk, checkpoints, logs, total and budget), per image and per template
 * (their size and the sandboxes resting on them), and what can be had back:
 * old images and templates ({@code kosa8 image prune}, as its dry run finds
 * them), checkpoints ({@code kosa8 checkpoint rm}) and the held changes
 * removed sandboxes left for review ({@code kosa8 accept}/{@code reject}).
 */
final class DiskReport {
    private DiskReport() {
    }

    static Map<String, Object> of(List<Sandbox> all, SandboxDisk disk, SandboxLayout layout, ImageStore images,
                                  Templates templates) {
        List<Map<String, Object>> sandboxes = new ArrayList<>();
        Map<Path, List<String>> restingOn = new HashMap<>();
        long checkpoints = 0;
        for (Sandbox s : all) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", s.id());
            row.put("state", s.record().state().name().toLowerCase(java.util.Locale.ROOT));
            Map<String, Object> use = disk.diskUse(s);
            row.putAll(use);
            checkpoints += (Long) use.get("checkpoints");
            sandboxes.add(row);
            try {
                for (Path layer : Pruner.chain(layout.rootDisk(s.id()))) {
                    restingOn.computeIfAbsent(layer, k -> new ArrayList<>()).add(s.id());
                }
            } catch (IOException | RuntimeException e) {
                // a disk qemu-img cannot read rests on nothing it can name
            }
        }
        String current = images.currentId().orElse("");
        List<Map<String, Object>> imageRows = new ArrayList<>();
        for (Image i : images.list()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", i.id());
            row.put("current", i.id().equals(current));
            row.put("bytes", images.bytesOnlyIn(i.id()));
            row.put("sandboxes", restingOn.getOrDefault(real(i.rootfs()), List.of()));
            imageRows.add(row);
        }
        List<Map<String, Object>> templateRows = new ArrayList<>();
        for (Templates.Sized t : templates.sizes()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("name", t.name());
            row.put("image", t.imageId());
            row.put("current", t.current());
            row.put("bytes", t.bytes());
            row.put("sandboxes", restingOn.getOrDefault(real(t.disk()), List.of()));
            templateRows.add(row);
        }
        List<Pruner.Item> prunable = current.isEmpty() ? List.of() : disk.prune(true);
        Map<String, Object> reclaimable = new LinkedHashMap<>();
        reclaimable.put("prune", prunable.stream().mapToLong(Pruner.Item::bytes).sum());
        reclaimable.put("pruneItems", prunable);
        reclaimable.put("checkpoints", checkpoints);
        Map<String, Long> kept = keptHeld(layout);
        reclaimable.put("heldKept", kept.values().stream().mapToLong(Long::longValue).sum());
        reclaimable.put("heldKeptSandboxes", List.copyOf(kept.keySet()));
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("sandboxes", sandboxes);
        report.put("images", imageRows);
        report.put("templates", templateRows);
        report.put("reclaimable", reclaimable);
        return report;
    }

    private static Map<String, Long> keptHeld(SandboxLayout layout) {
        try {
            return HeldLayers.keptBytes(layout);
        } catch (IOException e) {
            return Map.of(); // unreadable: `kosa8 review ID` says why, naming the folder
        }
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
