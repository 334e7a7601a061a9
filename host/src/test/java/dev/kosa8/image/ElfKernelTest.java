package dev.kosa8.image;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

class ElfKernelTest {

    @Test
    void findsTheXenPhys32EntryNoteAfterOtherNotes() {
        assertThat(ElfKernel.pvhProblem(ByteBuffer.wrap(TestKernels.elf(18)))).isNull();
    }

    @Test
    void reportsAMissingPvhNote() {
        assertThat(ElfKernel.pvhProblem(ByteBuffer.wrap(TestKernels.elf(5)))).contains("type 18");
    }

    @Test
    void reportsWhatIsNotAnX8664Elf() {
        assertThat(ElfKernel.pvhProblem(ByteBuffer.wrap(new byte[100]))).isEqualTo("not an ELF file");
        byte[] arm = TestKernels.elf(18);
        arm[0x12] = (byte) 0xb7; // EM_AARCH64
        assertThat(ElfKernel.pvhProblem(ByteBuffer.wrap(arm))).contains("x86-64");
    }

    @Test
    void survivesProgramHeadersPointingOutsideTheFile() {
        byte[] elf = TestKernels.elf(18);
        ByteBuffer.wrap(elf).order(java.nio.ByteOrder.LITTLE_ENDIAN).putShort(0x38, (short) 1000);
        assertThat(ElfKernel.pvhProblem(ByteBuffer.wrap(elf))).contains("outside the file");
    }
}
