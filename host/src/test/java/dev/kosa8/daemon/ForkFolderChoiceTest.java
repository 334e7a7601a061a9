package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.daemon.ForkFolderChoice.Mode;
import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Copy or view: what was asked, and for auto what the host can do. */
class ForkFolderChoiceTest {
    private final List<String> notes = new ArrayList<>();
    private static final Supplier<Optional<String>> VIEWS = Optional::empty;
    private static final Supplier<Optional<String>> NO_VIEWS = () -> Optional.of("no user namespaces");
    private static final BooleanSupplier CLONES = () -> true;
    private static final BooleanSupplier NO_CLONES = () -> false;

    private boolean view(Mode m, boolean named, boolean hasPlace, BooleanSupplier clones,
                         Supplier<Optional<String>> views) {
        return ForkFolderChoice.view(m, named, hasPlace, clones, views, notes::add);
    }

    @Test
    void autoCopiesWhereClonesShareTheContentOrAFolderIsNamedAndMakesAViewElsewhere() {
        assertThat(view(Mode.AUTO, false, true, NO_CLONES, VIEWS)).as("ext4: a view").isTrue();
        assertThat(view(Mode.AUTO, false, true, CLONES, VIEWS)).as("XFS: clones").isFalse();
        assertThat(view(Mode.AUTO, true, true, NO_CLONES, VIEWS)).as("a named folder gets the copy").isFalse();
        assertThat(view(Mode.AUTO, false, false, CLONES, VIEWS)).as("a view's fork: no place beside it").isTrue();
        assertThat(notes).isEmpty();
    }

    @Test
    void autoFallsBackToACopyWhereViewsCannotBeMadeAndSaysWhy() {
        assertThat(view(Mode.AUTO, false, true, NO_CLONES, NO_VIEWS)).isFalse();
        assertThat(notes).singleElement().asString().contains("full copy", "no user namespaces");
        assertThatThrownBy(() -> view(Mode.AUTO, false, false, NO_CLONES, NO_VIEWS))
                .as("no place for a copy and no view").isInstanceOf(KosaException.class)
                .hasMessageContaining("no user namespaces").extracting(e -> ((KosaException) e).suggestion())
                .asString().contains("--workspace DIR");
    }

    @Test
    void copyAndViewAreWhatTheySayOrAClearRefusal() {
        assertThat(view(Mode.COPY, false, true, NO_CLONES, VIEWS)).isFalse();
        assertThat(view(Mode.VIEW, false, true, CLONES, VIEWS)).as("even where clones would share").isTrue();
        assertThatThrownBy(() -> view(Mode.VIEW, true, true, NO_CLONES, VIEWS)).isInstanceOf(KosaException.class)
                .hasMessageContaining("--workspace names nothing");
        assertThatThrownBy(() -> view(Mode.VIEW, false, true, NO_CLONES, NO_VIEWS)).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot make a copy-on-write view");
        assertThat(Mode.parse("")).isEqualTo(Mode.AUTO);
        assertThat(Mode.parse("view")).isEqualTo(Mode.VIEW);
        assertThatThrownBy(() -> Mode.parse("cow")).isInstanceOf(KosaException.class)
                .hasMessageContaining("unknown folder mode: cow");
    }
}
