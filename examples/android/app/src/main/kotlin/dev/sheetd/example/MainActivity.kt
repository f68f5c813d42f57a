package dev.sheetd.example

import android.os.Bundle
import android.widget.Button as ViewButton
import android.widget.LinearLayout
import android.widget.TextView
import androidx.activity.ComponentActivity
import androidx.activity.compose.setContent
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.Button
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.DisposableEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Modifier
import androidx.compose.ui.unit.dp
import androidx.lifecycle.lifecycleScope
import dev.sheetd.android.SheetdBottomSheetDialog
import dev.sheetd.android.SheetdModalBottomSheet
import dev.sheetd.client.Decision
import dev.sheetd.client.DecisionListener
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.SheetContext
import dev.sheetd.client.SheetdClient
import dev.sheetd.client.SheetdConfiguration
import dev.sheetd.client.SheetdException
import dev.sheetd.client.SheetdTokenProvider
import dev.sheetd.client.reportCount
import dev.sheetd.client.watch
import kotlinx.coroutines.launch
import java.io.File
import java.util.Locale

/**
 * Shows the example catalog's `home-offers` card sheet from a live sheetd: the home screen follows its
 * decision (the stream), "Add an offer" reports the offers container's count, and the sheet is
 * presented through the Compose adapter or, with "Use Views", through the Views adapter. Impressions,
 * dismissals and the content height go through the client's outbox (a file: they survive a restart).
 */
class MainActivity : ComponentActivity() {
    private val client by lazy {
        SheetdClient(
            BuildConfig.SHEETD_URL, BuildConfig.SHEETD_USER,
            object : SheetdTokenProvider {
                // A real app asks its backend for the user's token and renews it before `exp`.
                override suspend fun token() = BuildConfig.SHEETD_TOKEN
            },
            SheetdConfiguration(outboxFile = File(filesDir, "sheetd-outbox.json"))
        )
    }
    private val home by lazy {
        SheetContext(
            screen = "home", tab = "accounts",
            appVersion = SheetContext.appVersion(BuildConfig.VERSION_NAME), locale = SheetContext.locale(Locale.getDefault())
        )
    }
    private var offers = 0

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        lifecycleScope.launch { client.flush() } // events a previous run could not deliver
        showCompose()
    }

    private fun addOffer() {
        offers++
        lifecycleScope.launch {
            try {
                client.reportCount(offers, "offers-home")
            } catch (e: SheetdException) {
                // Shown nowhere: the decision stays as it was.
            }
        }
    }

    /** The Compose path: the decision as state, the sheet through SheetdModalBottomSheet. */
    private fun showCompose() {
        setContent {
            MaterialTheme {
                var current by remember { mutableStateOf<Decision?>(null) }
                DisposableEffect(Unit) {
                    val job = client.watch(home, lifecycleScope, object : DecisionListener {
                        override fun onDecision(decision: Decision) { current = decision }
                    })
                    onDispose { job.cancel() } // the Views path follows the decision itself
                }
                HomeScreen(current, onAddOffer = ::addOffer, onUseViews = ::showViews)
                SheetdModalBottomSheet(current, client) { controls ->
                    Text("You have $offers offers", Modifier.padding(24.dp), style = MaterialTheme.typography.titleMedium)
                    Button(onClick = { controls.close(DismissalMethod.ACTION) }, Modifier.padding(24.dp)) { Text("See offers") }
                }
            }
        }
    }

    /** The Views path: a plain layout and SheetdBottomSheetDialog, driven by a listener. */
    private fun showViews() {
        val status = TextView(this)
        val layout = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            addView(status)
            addView(ViewButton(context).apply { text = "Add an offer"; setOnClickListener { addOffer() } })
        }
        setContentView(layout)
        var shown: SheetdBottomSheetDialog? = null
        client.watch(home, lifecycleScope, object : DecisionListener {
            override fun onDecision(decision: Decision) {
                status.text = "decision: ${decision.reason}"
                val sheet = decision.sheet
                if (sheet == null || !decision.present) {
                    shown?.withdraw() // the server withdrew it: nothing to report
                    shown = null
                    return
                }
                if (shown?.session?.sheet?.id == sheet.id) return
                val content = LinearLayout(this@MainActivity).apply {
                    orientation = LinearLayout.VERTICAL
                    addView(TextView(context).apply { text = "You have $offers offers"; setPadding(48, 48, 48, 24) })
                }
                val dialog = SheetdBottomSheetDialog(this@MainActivity, sheet, client, lifecycleScope, content)
                content.addView(ViewButton(this@MainActivity).apply { text = "See offers"; setOnClickListener { dialog.close(DismissalMethod.ACTION) } })
                dialog.show()
                shown = dialog
            }
        })
    }
}

@Composable
private fun HomeScreen(decision: Decision?, onAddOffer: () -> Unit, onUseViews: () -> Unit) {
    Column(Modifier.fillMaxSize().padding(24.dp), verticalArrangement = Arrangement.spacedBy(12.dp)) {
        Text("Accounts", style = MaterialTheme.typography.headlineMedium)
        Text("decision: ${decision?.reason ?: "…"}")
        Button(onClick = onAddOffer) { Text("Add an offer") }
        Button(onClick = onUseViews) { Text("Use Views") }
    }
}
