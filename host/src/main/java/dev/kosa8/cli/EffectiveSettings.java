package dev.kosa8.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The settings a new sandbox gets and where each came from: the command line, the project's
 * {@code .kosa8/config.toml}, or kosa8's default. A setting given on the command line replaces the file's whole
 * (a list included), so what the command says is what the sandbox gets.
 */
record EffectiveSettings(Map<String, Setting> settings) {
    /** One setting: its value (a list's items joined by ", ") and its source. */
    record Setting(String name, List<String> values, String source) {
        String value() {
            return String.join(", ", values);
        }
    }

    static final String COMMAND_LINE = "command line";
    static final String DEFAULT = "default";

    static EffectiveSettings of(SandboxOptions o, ProjectConfig file) {
        String fromFile = file.file() == null ? null : file.file().toString();
        Map<String, Setting> s = new LinkedHashMap<>();
        put(s, "image", o.image, file.image(), fromFile, "");
        put(s, "cpus", o.cpus == null ? null : String.valueOf(o.cpus), file.cpus() == null ? null
                : String.valueOf(file.cpus()), fromFile, String.valueOf(SandboxOptions.DEFAULT_CPUS));
        put(s, "memory", o.memory, file.memory(), fromFile, SandboxOptions.DEFAULT_MEMORY);
        put(s, "net", o.net, file.net(), fromFile, SandboxOptions.DEFAULT_NET);
        putList(s, "allow", o.allow, file.allow(), fromFile);
        putList(s, "passthrough", o.passthrough, file.passthrough(), fromFile);
        putList(s, "secrets", o.secrets, file.secrets(), fromFile);
        return new EffectiveSettings(java.util.Collections.unmodifiableMap(s));
    }

    String value(String name) {
        return settings.get(name).value();
    }

    List<String> list(String name) {
        return settings.get(name).values();
    }

    private static void put(Map<String, Setting> s, String name, String given, String inFile, String fromFile,
                            String dflt) {
        if (given != null) {
            s.put(name, new Setting(name, List.of(given), COMMAND_LINE));
        } else if (inFile != null) {
            s.put(name, new Setting(name, List.of(inFile), fromFile));
        } else {
            s.put(name, new Setting(name, List.of(dflt), DEFAULT));
        }
    }

    private static void putList(Map<String, Setting> s, String name, List<String> given, List<String> inFile,
                                String fromFile) {
        if (!given.isEmpty()) {
            s.put(name, new Setting(name, given, COMMAND_LINE));
        } else if (!inFile.isEmpty()) {
            s.put(name, new Setting(name, inFile, fromFile));
        } else {
            s.put(name, new Setting(name, List.of(), DEFAULT));
        }
    }
}
