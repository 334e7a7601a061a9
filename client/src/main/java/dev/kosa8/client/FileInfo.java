package dev.kosa8.client;

import java.time.Instant;

/**
 * A file in the sandbox, as {@code stat} sees it.
 *
 * @param type          {@code file}, {@code directory}, {@code symlink}, {@code fifo}, {@code socket},
 *                      {@code char_device}, {@code block_device} or {@code other}
 * @param mode          its permission bits as octal text ({@code "0644"}), set-id and sticky bits included
 * @param owner         its owner's name in the guest ("" when the guest has none for its uid)
 * @param symlinkTarget a link's target as written in the link; null for anything else
 */
public record FileInfo(String path, String name, String type, long size, String mode, long uid, long gid,
                       String owner, String group, Instant modified, String symlinkTarget) {

    static FileInfo of(Object v) {
        Object target = Json.get(v, "symlinkTarget");
        return new FileInfo(Json.text(v, "path"), Json.text(v, "name"), Json.text(v, "type"), Json.number(v, "size"),
                Json.text(v, "mode"), Json.number(v, "uid"), Json.number(v, "gid"), Json.text(v, "owner"),
                Json.text(v, "group"), Values.instant(v, "modified"), target == null ? null : String.valueOf(target));
    }

    public boolean isDirectory() {
        return type.equals("directory");
    }

    public boolean isFile() {
        return type.equals("file");
    }
}
