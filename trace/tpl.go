package trace

// The Task Parallel Library's events. System.Threading.Tasks.TplEventSource
// (CoreLib) gives its events tasks and opcodes (TaskStarted is
// TaskExecute/Start, TaskWaitBegin TaskWait/Send), which async causality
// is traced by. EventPipe metadata records no task, and no opcode before
// NetTrace V5, and the events have no generated type: their tasks and
// opcodes are the EventSource's, by event ID, as TraceEvent's parser for
// the provider (TplEtwProviderTraceEventParser) has them. An event this
// table lacks has neither.

const tplProvider = "System.Threading.Tasks.TplEventSource"

// tplTaskOp is an event's task and opcode.
type tplTaskOp struct {
	task   uint16
	opcode uint8
}

// The tasks TplEventSource declares, and those EventSource gives the
// events it declares none for (0xFFFE less the event ID).
const (
	tplLoop, tplInvoke, tplTaskExecute, tplTaskWait, tplForkJoin, tplTaskScheduled = 1, 2, 3, 4, 5, 6
	tplAwaitTaskContinuationScheduled, tplTraceOperation, tplTraceSynchronousWork  = 7, 8, 9
)

// tplTaskNames are the names of TplEventSource's tasks, as TraceEvent's
// parser names its events ("TaskExecute/Start"); the events of no task
// of their own are named by their name alone.
var tplTaskNames = [...]string{
	tplLoop: "Loop", tplInvoke: "Invoke", tplTaskExecute: "TaskExecute", tplTaskWait: "TaskWait",
	tplForkJoin: "ForkJoin", tplTaskScheduled: "TaskScheduled",
	tplAwaitTaskContinuationScheduled: "AwaitTaskContinuationScheduled",
	tplTraceOperation:                 "TraceOperation", tplTraceSynchronousWork: "TraceSynchronousWork",
}

// tplEvents are the tasks and opcodes by event ID; a zero entry is an
// event the table does not have.
var tplEvents = [...]tplTaskOp{
	1:  {tplLoop, opcodeStart},                          // ParallelLoopBegin
	2:  {tplLoop, opcodeStop},                           // ParallelLoopEnd
	3:  {tplInvoke, opcodeStart},                        // ParallelInvokeBegin
	4:  {tplInvoke, opcodeStop},                         // ParallelInvokeEnd
	5:  {tplForkJoin, opcodeStart},                      // ParallelFork
	6:  {tplForkJoin, opcodeStop},                       // ParallelJoin
	7:  {tplTaskScheduled, opcodeSend},                  // TaskScheduled
	8:  {tplTaskExecute, opcodeStart},                   // TaskStarted
	9:  {tplTaskExecute, opcodeStop},                    // TaskCompleted
	10: {tplTaskWait, opcodeSend},                       // TaskWaitBegin
	11: {tplTaskWait, opcodeStop},                       // TaskWaitEnd
	12: {tplAwaitTaskContinuationScheduled, opcodeSend}, // AwaitTaskContinuationScheduled
	13: {0xFFFE - 13, 0},                                // TaskWaitContinuationComplete
	14: {tplTraceOperation, opcodeStart},                // TraceOperationBegin
	15: {tplTraceOperation, opcodeStop},                 // TraceOperationEnd
	16: {0xFFFE - 16, 0},                                // TraceOperationRelation
	17: {tplTraceSynchronousWork, opcodeStart},          // TraceSynchronousWorkBegin
	18: {tplTraceSynchronousWork, opcodeStop},           // TraceSynchronousWorkEnd
	27: {0xFFFE - 27, 0},                                // IncompleteAsyncMethod
}

// tplEvent is the task and opcode of TplEventSource's event id, and
// whether the table has it.
func tplEvent(id uint16) (tplTaskOp, bool) {
	if int(id) < len(tplEvents) && tplEvents[id].task != 0 {
		return tplEvents[id], true
	}
	return tplTaskOp{}, false
}
