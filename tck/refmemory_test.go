//go:build ratchet_bugs

package tck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The reference store is becoming memory.Store with its defects planted
// by guards in its own code (memory.Plant, compiled only with the tag
// ratchet_bugs), instead of a store of the kit's tests: the defects below
// moved there, the others are still the refStore's (TestSelfBrokenStoresAreCaught).

// memoryBugs are the defects planted in memory.Store, each with the cases
// that must catch it.
var memoryBugs = []struct {
	bug  bug
	want []string
}{
	{bugKeepsCallerJobs, []string{"Insert/CallerCopyIndependent"}},
	{bugDropsParams, []string{"Insert/RoundTrip", "List/FullJobs"}},
	{bugTruncatesTrace, []string{"Insert/TraceContext"}},
	{bugLocalTimes, []string{"Insert/RoundTrip", "Claim/ClaimedFields"}},
	{bugUnknownNilNil, []string{"Insert/GetUnknown", "Idempotency/AcrossCalls"}},
	{bugNoIdempotency, []string{"Idempotency/AcrossCalls", "Idempotency/WithinBatch", "Idempotency/KeyOfFinishedJob"}},
	{bugBatchKeys, []string{"Idempotency/WithinBatch"}},
	{bugTruncatesPayload, []string{"Insert/LargePayload"}},
	{bugEmptyInsertFails, []string{"Insert/EmptyBatch"}},
	{bugListNextAlways, []string{"List/Paging", "List/OrderByID"}},
	{bugListLimitBeforeFilter, []string{"List/PagingWithStatus"}},
	{bugListBeforeInclusive, []string{"List/TaskAndCreatedFilters"}},
	{bugListErrorCaseSensitive, []string{"List/TagPriorityAndErrorFilters"}},
	{bugListPropertyAnyKey, []string{"Properties/ListJobsByProperty"}},
	{bugCountIgnoresFilters, []string{"Count/Filters"}},
	{bugCountPastCap, []string{"Count/Filters"}},
	{bugClaimIgnoresPriority, []string{"Claim/OrderByPriority", "Claim/OrderMixed", "Claim/BestNInterleaved"}},
	{bugClaimNoAging, []string{"Claim/AgingOvertakes", "Claim/AgingTieByDueTime", "Claim/BestNOverall", "Claim/AgingOrder"}},
	{bugClaimPerLevelShort, []string{"Claim/BestNOverall", "Claim/BestNInterleaved"}},
	{bugClaimDueExclusive, []string{"Claim/DueTime"}},
	{bugClaimWallClock, []string{"Claim/DueTime", "Claim/ClaimedFields"}},
	{bugClaimRunning, []string{"Claim/NoDoubleClaim"}},
	{bugClaimCancelled, []string{"Cancel/NeverClaimed"}},
	{bugClaimIgnoresDue, []string{"Claim/NothingDue", "Claim/DueTime", "Claim/OnlyDueJobs"}},
	{bugClaimIgnoresTags, []string{"Tags/All", "Tags/Any", "Tags/None", "Tags/UntaggedJobs", "Tags/Combined", "Tags/ExactTags",
		"Tags/NoHeadOfLineBlocking", "Tags/FilterAndAging"}},
	{bugTagsHeadOfLine, []string{"Tags/NoHeadOfLineBlocking"}},
	{bugClaimIgnoresTasks, []string{"Tasks/OnlyListedTasks", "Tasks/NoHeadOfLineBlocking", "Tasks/OrderAcrossTasks", "Tasks/WithTagsAndPermits"}},
	{bugTasksHeadOfLine, []string{"Tasks/NoHeadOfLineBlocking"}},
	{bugTasksFirstOnly, []string{"Tasks/OnlyListedTasks", "Tasks/OrderAcrossTasks"}},
	{bugTagsSubstring, []string{"Tags/ExactTags"}},
	{bugTagsDropUntagged, []string{"Tags/None", "Tags/UntaggedJobs"}},
	{bugClaimIgnoresPermits, []string{"Permits/LimitInOneClaim", "Permits/NoHeadOfLineBlocking", "Permits/NoHeadOfLineInOneClaim",
		"Permits/IndependentResources", "Permits/Concurrency", "Permits/FreedBySuccess", "Permits/FreedByRecovery"}},
	{bugPermitsHeadOfLine, []string{"Permits/NoHeadOfLineBlocking", "Permits/NoHeadOfLineInOneClaim"}},
	{bugPermitsPerCall, []string{"Permits/LimitInOneClaim", "Permits/NoHeadOfLineInOneClaim", "Permits/IndependentResources"}},
	{bugClaimWaiting, []string{"Signals/InsertWaiting"}},
	{bugCompleteIgnoresSeq, []string{"Fencing/CompleteStaleSeq", "Fencing/CompleteMixedBatch", "Release/Release", "Complete/Retry"}},
	{bugCompleteIgnoresStatus, []string{"Fencing/CompleteNotRunning", "Fencing/CompleteTwice"}},
	{bugCompleteAdvancesSeq, []string{"Complete/Retry", "Complete/Succeeded"}},
	{bugRetrySetsFinishedAt, []string{"Complete/Retry"}},
	{bugRetryKeepsOwner, []string{"Complete/Retry"}},
	{bugSuccessResetsAttempts, []string{"Complete/SucceededAfterRetry"}},
	{bugReleaseChargesCrash, []string{"Release/Release", "Release/ReleaseKeepsCrashCount"}},
	{bugReleaseKeepsSeq, []string{"Release/Release"}},
	{bugReleaseKeepsSchedule, []string{"Release/Release"}},
	{bugRetryFailedKeepsCrash, []string{"RetryFailed/Reset"}},
	{bugRetryFailedAnyState, []string{"RetryFailed/NotFailed"}},
	{bugCancelAnyState, []string{"Cancel/NotPending"}},
	{bugCancelUnknownNil, []string{"Cancel/Unknown"}},
	{bugCompleteUnknownErrors, []string{"Fencing/CompleteUnknownJob"}},
	{bugCompleteNoReplay, []string{"Fencing/CompleteReplayed"}},
	{bugCompletePartialBatch, []string{"Fencing/CompleteUnknownOutcome"}},
	{bugRetryFailedUnknownNil, []string{"RetryFailed/Unknown"}},
	{bugRetryKeepsPermit, []string{"Permits/FreedByRetry"}},
	{bugHeartbeatNoRefresh, []string{"Recovery/HeartbeatRefresh"}},
	{bugRecoverAllNodes, []string{"Recovery/FreshHeartbeat", "Recovery/OtherNodesUntouched", "Recovery/ForcedNodes"}},
	{bugRecoverNoRowMissed, []string{"Recovery/NoNodeRow", "Recovery/CrashBudget", "Recovery/DeregisterNode"}},
	{bugRecoverKeepsNodeRows, []string{"Recovery/NodeRowDeleted"}},
	{bugRecoverAnyStatus, []string{"Recovery/OnlyRunningJobs"}},
	{bugRecoverNoBudget, []string{"Recovery/CrashBudget", "Recovery/BudgetZero"}},
	{bugRecoverGraceInclusive, []string{"Recovery/GraceBoundary"}},
	{bugRecoverIgnoresNodes, []string{"Recovery/ForcedNodes"}},
	{bugRecoverKeepsSeq, []string{"Recovery/StaleHeartbeat", "Recovery/CrashBudget", "Recovery/BudgetZero"}},
	{bugDeregisterNoop, []string{"Recovery/DeregisterNode"}},
	{bugRecoverKeepsForcedRows, []string{"Recovery/ForcedNodeRowDeleted"}},
	{bugRecoverFailKeepsOwner, []string{"Recovery/FailedFields"}},
	{bugRecoverKeepsPermit, []string{"Permits/FreedByRecovery", "Permits/FreedByRecoveryToFailed"}},
	{bugLiveNodesExclusive, []string{"NodeTasks/LiveBoundary", "NodeTasks/RecordedWithTheHeartbeat"}},
	{bugNodeTasksOutliveNode, []string{"NodeTasks/DroppedWithTheNode"}},
	{bugNodeTasksUnsorted, []string{"NodeTasks/RecordedWithTheHeartbeat"}},
	{bugPendingCountsRunning, []string{"NodeTasks/PendingPerTask"}},
	{bugPendingEarliestLatest, []string{"NodeTasks/PendingPerTask"}},
	{bugCheckIgnoresSeq, []string{"ClaimCheck/StaleSeq"}},
	{bugCheckIgnoresStatus, []string{"ClaimCheck/AfterTransitions", "ClaimCheck/Unknown"}},
	{bugAdoptIgnoresNode, []string{"Adopt/LostClaim"}},
	{bugAdoptIgnoresTime, []string{"Adopt/LostClaim"}},
	{bugAdoptIgnoresStatus, []string{"Adopt/OnlyRunning"}},
	{bugCloseTwiceFails, []string{"Close/Twice"}},
	{bugUsableAfterClose, []string{"Close/UseAfterClose"}},
	{bugNoReleaseOnRecovery, []string{"Workflows/ReleaseOnEveryFinish"}},
	{bugLeaseNeverExpires, []string{"Lease/RenewalExtends", "Lease/ExpiryBoundary", "Lease/Takeover"}},
	{bugLeaseExpiryExclusive, []string{"Lease/RenewalExtends", "Lease/ExpiryBoundary"}},
	{bugLeaseRenewKeepsExpiry, []string{"Lease/RenewalExtends"}},
	{bugLeaseReleaseAnyOwner, []string{"Lease/Release", "Lease/Takeover"}},
	{bugStateIgnoresVersion, []string{"State/FencedInitAndUpdate", "State/Unfenced"}},
	{bugStateFenceIgnoresSeq, []string{"State/FencedStaleSeq"}},
	{bugStateFenceIgnoresStatus, []string{"State/FencedNotRunning"}},
	{bugStateCompactsJSON, []string{"State/JSONRoundTrip"}},
	{bugPropertyOverwrite, []string{"Properties/WriteOnce"}},
	{bugInsertDropsProps, []string{"Properties/WrittenWithTheJob"}},
	{bugDuplicateProps, []string{"Properties/WrittenWithTheJob"}},
	{bugPrefixLike, []string{"Properties/Prefix"}},
	{bugUpdateIgnoresVersion, []string{"Schedules/UpdateCompareAndSet"}},
	{bugDueExclusive, []string{"Schedules/Due"}},
	{bugDueIncludesPaused, []string{"Schedules/Due"}},
	{bugFireWritesDuplicate, []string{"Schedules/SlotFiresOnce", "Schedules/ConcurrentFirers"}},
	{bugFireNotAtomic, []string{"Schedules/FireAdvances", "Schedules/FireInvalidJob"}},
	{bugFireIgnoresVersion, []string{"Schedules/FireAdvances"}},
	{bugSkipsNotRecorded, []string{"Schedules/FireAdvances"}},
	{bugArchiveIgnoresAge, []string{"Archive/MovesFinishedJobs"}},
	{bugArchiveRunning, []string{"Archive/NotFinishedStays"}},
	{bugArchiveDropsProps, []string{"Archive/MovesFinishedJobs"}},
	{bugArchiveKeepsLive, []string{"Archive/MovesFinishedJobs"}},
	{bugPurgeIgnoresAge, []string{"Archive/Purge"}},
	{bugPurgeLive, []string{"Archive/Purge"}},
	{bugLogUnfenced, []string{"JobLogs/FencedByTheClaim"}},
	{bugLogDeleteIgnores, []string{"JobLogs/RetentionDeletesOldLines"}},
	{bugLogResendTwice, []string{"JobLogs/ResentAppendWritesOnce"}},
	{bugLogUnbounded, []string{"JobLogs/BoundedWithAMarker"}},
	{bugLogPerRunBound, []string{"JobLogs/BoundedWithAMarker"}},
	{bugReleaseFirstParent, []string{"Workflows/ReleaseOnLastParent", "Workflows/RetryRevives"}},
	{bugReleaseKeepsDue, []string{"Workflows/ReleaseOnLastParent"}},
	{bugNoReleaseOnCancel, []string{"Workflows/ReleaseOnEveryFinish", "Workflows/CancelBlocked"}},
	{bugCancelBlockedRefused, []string{"Workflows/CancelBlocked"}},
	{bugRetryNoRevive, []string{"Workflows/RetryRevives"}},
	{bugReviveManualCancel, []string{"Workflows/RetryRevives"}},
	{bugCancelFlowKeepsSeq, []string{"Workflows/CancelWorkflow"}},
	{bugArchiveParents, []string{"Workflows/ArchiveKeepsParents"}},
	{bugNoParentStatus, []string{"Workflows/ReleaseOnLastParent", "Workflows/ReleaseOnEveryFinish", "Workflows/Repair"}},
	{bugCancelWaitingRefused, []string{"Signals/CancelWaiting"}},
	{bugDeliverIgnoresName, []string{"Signals/Deliver"}},
	{bugExpireIgnoresDue, []string{"Signals/Expire"}},
	{bugKeyIgnoresLimit, []string{"Signals/DeliverByKey"}},
	{bugChunkIgnoresOffset, []string{"Batches/CreateAndChunks"}},
	{bugFinishUnsealed, []string{"Batches/FinishSucceeded"}},
	{bugFinishIgnoresFailure, []string{"Batches/FinishFailed", "Batches/FinishOnceConcurrently"}},
	{bugCancelBatchKeepsChildren, []string{"Batches/Cancel"}},
	{bugArchiveOpenBatch, []string{"Batches/ArchiveKeepsOpenBatches"}},
	{bugBulkRetryKeepsCrash, []string{"Bulk/RetryOnlyFailed"}},
	{bugBulkCancelNoRelease, []string{"Bulk/CancelBlocked"}},
	{bugBulkAnswersTrue, []string{"Bulk/RetryOnlyFailed", "Bulk/CancelOnlyCancellable"}},
	{bugBulkNoLimit, []string{"Bulk/BatchLimit"}},
	{bugDeleteRunning, []string{"Delete/DeletesFinishedOnly"}},
	{bugDeleteParents, []string{"Delete/KeepsParentsOfUnfinished"}},
	{bugDeleteKeepsKey, []string{"Delete/DeletesFinishedOnly"}},
	{bugStatsMergesPriority, []string{"Stats/CountsByStatusTaskPriority"}},
	{bugStatsOldestRunning, []string{"Stats/OldestDue"}},
	{bugAuditOldestFirst, []string{"Audit/ListNewestFirst", "Audit/AppendAssignsSeq", "Audit/ConcurrentAppends"}},
	{bugAuditIgnoresBefore, []string{"Audit/ListNewestFirst", "Audit/ListDefaultLimit"}},
	{bugAuditDeleteIgnoreLimit, []string{"Audit/DeleteByAge"}},
	{bugAuditSkipsValidate, []string{"Audit/RefusesInvalid"}},
	{bugRewriteBlind, []string{"Rewrite/CompareAndSet"}},
	{bugValuesWithoutState, []string{"Rewrite/PagesEveryValue"}},
	{bugValuesPastLimit, []string{"Rewrite/PagesEveryValue"}},
	{bugListInsertionOrder, []string{"List/OrderByID", "List/Paging"}},
	{bugRecoverUnordered, []string{"Recovery/ReportOrder"}},
	{bugFindUnsorted, []string{"Properties/FindJobs"}},
	{bugWakeupNoSource, []string{"Wakeup/Source"}},
	{bugInsertAcceptsBadLimit, []string{"Permits/InvalidLimit", "Permits/InvalidLimitInBatch"}},
	{bugInsertPartialBatch, []string{"Permits/InvalidLimitInBatch"}},
	{bugWorkflowUnchecked, []string{"Workflows/RejectsBadBatches"}},
	{bugSignalUnchecked, []string{"Signals/RejectsBad"}},
	{bugChunkUnchecked, []string{"Batches/RejectsBad"}},
	{bugClaimIDDesc, []string{"Claim/OrderByID"}},
}

// memoryHarness is the internal harness of a memory.Store with defect b.
func memoryHarness(b bug) harness {
	return harness{
		open: func(tb) spi.Store {
			s := memory.New()
			memory.Plant(s, string(b))
			return s
		},
		concurrency: DefaultConcurrency,
	}
}

func TestSelfMemoryCatchesBugs(t *testing.T) {
	res := runRecorded(memoryHarness(bugNone))
	require.Empty(t, res.failedCases(), "failures of the memory store without a defect:\n%s", res.report())
	for _, tt := range memoryBugs {
		t.Run(strings.ReplaceAll(string(tt.bug), " ", "_"), func(t *testing.T) {
			t.Parallel()
			failed := runRecorded(memoryHarness(tt.bug)).failedCases()
			require.NotEmpty(t, failed, "Run passed a memory store with the defect %q", tt.bug)
			for _, w := range tt.want {
				assert.Contains(t, failed, w, "case %s must catch %q; failed cases: %v", w, tt.bug, failed)
			}
		})
	}
}
