package dev.kosa8.checkpoint;

/**
 * One path that differs between a folder at an instant and a folder now, in the form a change is applied by
 * ({@code kosa8 adopt}): {@link FolderChange} without the text.
 *
 * @param path    relative to the folder, as bytes (one char per byte, ISO-8859-1: the form the workspace's
 *                file calls take, so any Linux name is applied as it is)
 * @param display the path for messages ({@code ByteNames.display})
 * @param change  what kind of difference
 * @param before  the path at the instant; null when added
 * @param after   the path now; null when deleted
 */
public record FolderEdit(String path, String display, FolderChange.Change change, FolderChange.Side before,
                         FolderChange.Side after) {
}
