package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A sandbox's turn checkpoints, {@code turns.json} in its directory
 * (docs/files.md): which checkpoint each turn is, and the next turn's number.
 * The checkpoints themselves are ordinary checkpoints; a turn whose
 * checkpoint was removed (by thinning or by the user) is dropped here too.
 */
final class TurnLog {
    private static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);

    /** What the file holds. */
    record Content(int next, List<Turn> turns) {
        Content {
            turns = turns == null ? List.of() : List.copyOf(turns);
        }
    }

    private final Path file;

    TurnLog(Path sandboxDir) {
        this.file = sandboxDir.resolve("turns.json");
    }

    synchronized Content read() {
        if (!Files.exists(file)) {
            return new Content(1, List.of());
        }
        try {
            return JSON.readValue(file.toFile(), Content.class);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read " + file + ": " + e.getMessage(),
                    "remove it to forget which checkpoints were turns (the checkpoints stay)", e);
        }
    }

    /** The number the next turn gets. */
    int next() {
        return read().next();
    }

    synchronized Turn add(Turn t) {
        Content c = read();
        List<Turn> turns = new ArrayList<>(c.turns());
        turns.add(t);
        write(new Content(Math.max(c.next(), t.turn() + 1), turns));
        return t;
    }

    synchronized void remove(String checkpoint) {
        Content c = read();
        List<Turn> kept = c.turns().stream().filter(t -> !t.checkpoint().equals(checkpoint)).toList();
        if (kept.size() != c.turns().size()) {
            write(new Content(c.next(), kept));
        }
    }

    /** The turns whose checkpoints still exist, oldest first. */
    List<Turn> turns(java.util.Set<String> checkpoints) {
        return read().turns().stream().filter(t -> checkpoints.contains(t.checkpoint())).toList();
    }

    Optional<Turn> byCheckpoint(String checkpoint) {
        return read().turns().stream().filter(t -> t.checkpoint().equals(checkpoint)).findFirst();
    }

    Optional<Turn> byTurn(int turn) {
        return read().turns().stream().filter(t -> t.turn() == turn).findFirst();
    }

    private void write(Content c) {
        try {
            AtomicFile.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(c));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + file + ": " + e.getMessage(),
                    "check the disk has room and the directory is writable", e);
        }
    }
}
