#include "textflag.h"

// func indexZeroUnit(p []byte) int
//
// See zunit_amd64.go. SSE2, which every amd64 processor has: 64 bytes a
// step, then 16, then, when len(p) is even, the last 16 bytes of p
// (overlapping units already seen, which are not zero, so they cannot
// match again).
TEXT ·indexZeroUnit(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), BX
	MOVQ SI, DI
	MOVQ BX, R8
	PXOR X0, X0

loop64:
	CMPQ BX, $64
	JB   loop16
	MOVOU (SI), X1
	MOVOU 16(SI), X2
	MOVOU 32(SI), X3
	MOVOU 48(SI), X4
	PCMPEQW X0, X1
	PCMPEQW X0, X2
	PCMPEQW X0, X3
	PCMPEQW X0, X4
	MOVOU X1, X5
	POR   X2, X5
	POR   X3, X5
	POR   X4, X5
	PMOVMSKB X5, AX
	TESTL AX, AX
	JNZ   found64
	ADDQ  $64, SI
	SUBQ  $64, BX
	JMP   loop64

found64:
	PMOVMSKB X1, AX
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, SI
	PMOVMSKB X2, AX
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, SI
	PMOVMSKB X3, AX
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, SI
	PMOVMSKB X4, AX
	JMP   found

loop16:
	CMPQ BX, $16
	JB   tail
	MOVOU (SI), X1
	PCMPEQW X0, X1
	PMOVMSKB X1, AX
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, SI
	SUBQ  $16, BX
	JMP   loop16

found:
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ SI, AX
	MOVQ AX, ret+24(FP)
	RET

tail:
	// No whole block left: the last 16 bytes, if p has them and its
	// length is even (so their units are p's units).
	TESTQ BX, BX
	JZ    notfound
	CMPQ  R8, $16
	JB    notfound
	TESTQ $1, R8
	JNZ   notfound
	LEAQ  -16(DI)(R8*1), SI
	MOVOU (SI), X1
	PCMPEQW X0, X1
	PMOVMSKB X1, AX
	TESTL AX, AX
	JNZ   found

notfound:
	MOVQ $-1, ret+24(FP)
	RET
