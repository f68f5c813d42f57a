package dev.sheetd.material

import dev.sheetd.client.Decision
import dev.sheetd.client.DetentId
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetdEvent

// What the Views and Compose adapters decide, as plain types tested on the JVM (the same logic as the
// iOS client's): when the impression is reported, which dismissal method, what not to present again,
// which content height to report. The adapters only feed them Material's callbacks.

/** What ended a sheet, as Android tells them apart. */
enum class DismissCause {
    /** The user dragged the sheet down to Hidden. */
    DRAG,
    /** Back (the button, the gesture, predictive back committed). */
    BACK_PRESS,
    /** A touch on the scrim outside the sheet. */
    OUTSIDE_TOUCH
}

/**
 * One presentation of one sheet, from on screen to gone.
 *
 * - The impression is due the first time the sheet is shown, once per presentation (a sheet revealed
 *   again when a nested one closes, or laid out again, is not a new impression); its event id is fixed.
 * - The dismissal method: a control the app closed it with ([willClose]) wins; else the user's cause
 *   ([DismissCause]: a drag is `swipe`, a touch outside is `scrim`, Back is `swipe`: the server's
 *   methods have no Back, and Back is the system's dismiss gesture); else the app closed it in code:
 *   `programmatic`, which does not latch. Reported once.
 */
class SheetLifecycle(val sheet: SheetPresentation) {
    val impressionEventId: String = SheetdEvent.newEventId()
    val dismissalEventId: String = SheetdEvent.newEventId()
    var impressionDue = false
        private set
    var endedWith: DismissalMethod? = null
        private set
    /** The cause observed for the end, if the user caused it. */
    var cause: DismissCause? = null
        private set
    private var control: DismissalMethod? = null
    private var dragging = false
    private var withdrawnByServer = false

    /** The sheet is on screen (`onStart`/`onShow`, `LaunchedEffect`): true the first time. */
    @Synchronized fun appeared(): Boolean {
        if (impressionDue || endedWith != null) return false
        impressionDue = true
        return true
    }

    /** The app closes the sheet through a control (`closeButton`, `cancelButton`, `action`) or in code (`programmatic`). */
    @Synchronized fun willClose(method: DismissalMethod) { control = method }

    /** `BottomSheetBehavior.STATE_DRAGGING`: the user holds the sheet. */
    @Synchronized fun dragStarted() { dragging = true }

    /** The sheet settled at a resting state other than Hidden (the drag was pulled back up). */
    @Synchronized fun settled() { dragging = false }

    @Synchronized fun backPressed() { cause = DismissCause.BACK_PRESS }

    @Synchronized fun touchedOutside() { cause = DismissCause.OUTSIDE_TOUCH }

    /** The decision withdrew the sheet (its count went to 0): its end is not reported, sheetd knows. */
    @Synchronized fun withdrawn() { withdrawnByServer = true }

    /** A confirm dialog was declined: the sheet stays, forget what asked to close it. */
    @Synchronized fun closeDeclined() {
        cause = null
        control = null
        dragging = false
    }

    /**
     * The sheet is gone; [interactive]: the system dismissed it on a user action (dialog cancel, Compose's
     * `onDismissRequest`). [plan] settles swipe against scrim when no cause was observed (Compose does
     * not say): when only one of them may dismiss it was that one, else `swipe`. Null when already reported.
     */
    @Synchronized fun dismissed(interactive: Boolean, plan: MaterialSheetPlan? = null): DismissalMethod? {
        if (endedWith != null || withdrawnByServer) return null
        val seen = cause ?: if (dragging) DismissCause.DRAG else null
        if (seen != null && control == null) cause = seen
        val method = control ?: when {
            !interactive -> DismissalMethod.PROGRAMMATIC
            seen == DismissCause.OUTSIDE_TOUCH -> DismissalMethod.SCRIM
            seen != null -> DismissalMethod.SWIPE
            plan != null && !plan.views.hideable && plan.views.touchOutside == DialogAction.DISMISS -> DismissalMethod.SCRIM
            else -> DismissalMethod.SWIPE
        }
        endedWith = method
        return method
    }
}

/**
 * What a decision-driven sheet presents: the decision's sheet, except one the user just dismissed (the
 * decision that presented it stays in effect until the server has the dismissal and answers anew). A
 * later decision presenting it again (a new count released the latch) is honoured once the dismissal
 * report finished; a decision without it forgets the hold.
 */
class SheetPresentationGate {
    private class Hold(val decision: Decision?, var reported: Boolean)
    private val held = HashMap<String, Hold>()

    @Synchronized fun sheet(decision: Decision?): SheetPresentation? {
        val sheet = decision?.takeIf { it.present }?.sheet ?: return null
        val hold = held[sheet.id] ?: return sheet
        return if (hold.reported && hold.decision != decision) sheet else null
    }

    @Synchronized fun dismissed(sheetId: String, under: Decision?) { held[sheetId] = Hold(under, false) }

    @Synchronized fun dismissalReported(sheetId: String) { held[sheetId]?.reported = true }

    /** A new decision arrived: holds of sheets it does not present are let go. */
    @Synchronized fun observe(decision: Decision?) {
        val presented = if (decision?.present == true) decision.sheet?.id else null
        held.keys.retainAll { it == presented }
    }

    @Synchronized fun isHolding(sheetId: String) = held.containsKey(sheetId)
}

/**
 * Which measured content height to report, and when: for a sheet sized by its content (a `content`
 * detent, or awaiting its height), when the height (dp, rounded up, at most 10 000) is new by at least
 * [minimumChange] against what the decision knows and the last report. Measure the content's own
 * height (not the sheet's), so a report cannot feed back on itself.
 */
class ContentHeightReporter(val minimumChange: Double = 1.0) {
    private val lastReported = HashMap<String, Double>()

    @Synchronized fun heightToReport(measuredDp: Double, sheet: SheetPresentation): Double? {
        if (measuredDp.isNaN() || measuredDp.isInfinite() || measuredDp <= 0) return null
        val known = sheet.detents.firstOrNull { it.id == DetentId.CONTENT }?.height
        if (!sheet.awaitingContentHeight && known == null && sheet.variant.rawValue != "content") return null
        val height = Math.min(Math.ceil(measuredDp), 10_000.0)
        if (!sheet.awaitingContentHeight && known != null && Math.abs(known - height) < minimumChange) return null
        lastReported[sheet.id]?.let { if (Math.abs(it - height) < minimumChange) return null }
        lastReported[sheet.id] = height
        return height
    }
}
