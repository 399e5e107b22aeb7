#include "textflag.h"

// func indexZeroUnits(p []byte, base int, ends []int) int
//
// See zunits_amd64.go; offsets are stored plus base. SSE2, which every
// amd64 processor has. Masks hold one bit per zero unit (the low bit of
// PMOVMSKB's pair for it), so each unit found clears one bit.
//
//   - 64 bytes a step while 64 are left: four PCMPEQW, one 64-bit mask;
//   - then, if p had 64 bytes or more, the last 64 bytes of p that hold
//     whole units, with the bytes already seen masked off;
//   - otherwise 16 bytes a step, then the last 16 bytes the same way;
//   - and under 16 bytes, unit by unit.
//
// Each mask gives up its units, lowest first, until len(ends) are found.

// MASK64 sets AX to the mask of the 64 bytes at p+R10.
#define MASK64 \
	LEAQ (R8)(R10*1), SI \
	MOVOU (SI), X1 \
	MOVOU 16(SI), X2 \
	MOVOU 32(SI), X3 \
	MOVOU 48(SI), X4 \
	PCMPEQW X0, X1 \
	PCMPEQW X0, X2 \
	PCMPEQW X0, X3 \
	PCMPEQW X0, X4 \
	PMOVMSKB X1, AX \
	PMOVMSKB X2, DX \
	PMOVMSKB X3, R11 \
	PMOVMSKB X4, R12 \
	SHLQ $16, DX \
	SHLQ $32, R11 \
	SHLQ $48, R12 \
	ORQ  DX, AX \
	ORQ  R11, R12 \
	ORQ  R12, AX \
	ANDQ R13, AX

// SEEN clears AX's bits for the bytes before p+BX (the last chunk starts
// at p+R10, and the bytes before p+BX were in earlier chunks): BX becomes
// the count to clear, less than the chunk's size.
#define SEEN \
	SUBQ R10, BX \
	MOVQ CX, R15 \
	MOVQ BX, CX \
	MOVQ $-1, DX \
	SHLQ CX, DX \
	MOVQ R15, CX \
	ANDQ DX, AX

// POP stores AX's units, at offsets from R10 (plus base), until len(ends)
// are found
// (then done), and goes on at next when AX has no more.
#define POP(loop, next) \
loop: \
	BSFQ AX, DX \
	ADDQ R10, DX \
	ADDQ base+24(FP), DX \
	MOVQ DX, (DI)(R9*8) \
	INCQ R9 \
	CMPQ R9, CX \
	JEQ  done \
	LEAQ -1(AX), DX \
	ANDQ DX, AX \
	JNZ  loop \
	JMP  next

TEXT ·indexZeroUnits(SB), NOSPLIT, $0-64
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), BX
	MOVQ ends_base+32(FP), DI
	MOVQ ends_len+40(FP), CX
	MOVQ SI, R8                    // p
	XORQ R9, R9                    // units found
	TESTQ CX, CX
	JZ   done
	PXOR X0, X0
	MOVQ $0x5555555555555555, R13  // the low bit of each byte pair
	CMPQ BX, $64
	JB   loop16
	MOVQ BX, R14
	ANDQ $-2, R14
	SUBQ $64, R14                  // where the last chunk starts
	XORQ R10, R10                  // where this chunk starts

loop64:
	CMPQ R10, R14
	JGE  last64
	MASK64
	TESTQ AX, AX
	JNZ  pop64

next64:
	ADDQ $64, R10
	JMP  loop64

last64:
	// The last 64 bytes that hold whole units; the ones before R10 (the
	// next chunk's start, at most R14+64) were seen.
	MOVQ R10, BX
	MOVQ R14, R10
	CMPQ BX, R10
	JLT  done                      // not possible
	MOVQ BX, R11
	SUBQ R10, R11
	CMPQ R11, $64
	JGE  done
	MASK64
	SEEN
	TESTQ AX, AX
	JNZ  popl64
	JMP  done

	POP(pop64, next64)
	POP(popl64, done)

loop16:
	// Fewer than 64 bytes: 16 a step, then the last 16 that hold whole
	// units, as above.
	CMPQ BX, $16
	JB   short
	MOVQ BX, R14
	ANDQ $-2, R14
	SUBQ $16, R14
	XORQ R10, R10

step16:
	CMPQ R10, R14
	JGE  last16
	MOVOU (R8)(R10*1), X1
	PCMPEQW X0, X1
	PMOVMSKB X1, AX
	ANDQ R13, AX
	JNZ  pop16

next16:
	ADDQ $16, R10
	JMP  step16

last16:
	MOVQ R10, BX
	MOVQ R14, R10
	MOVQ BX, R11
	SUBQ R10, R11
	CMPQ R11, $16
	JGE  done
	MOVOU (R8)(R10*1), X1
	PCMPEQW X0, X1
	PMOVMSKB X1, AX
	ANDQ R13, AX
	SEEN
	TESTQ AX, AX
	JNZ  popl16
	JMP  done

	POP(pop16, next16)
	POP(popl16, done)

short:
	// Fewer than 16 bytes: unit by unit.
	XORQ R10, R10
	ANDQ $-2, BX

unit:
	CMPQ R10, BX
	JGE  done
	MOVWLZX (R8)(R10*1), AX
	TESTL AX, AX
	JNZ  nextunit
	MOVQ R10, DX
	ADDQ base+24(FP), DX
	MOVQ DX, (DI)(R9*8)
	INCQ R9
	CMPQ R9, CX
	JEQ  done

nextunit:
	ADDQ $2, R10
	JMP  unit

done:
	MOVQ R9, ret+56(FP)
	RET
