import SheetdClient
import SwiftUI

/// The card sheet's content: sized by its content (the decision's `content` detent waits for the
/// height `.sheetdReportsContentHeight()` reports), closed by a button that reports `closeButton`.
struct OfferCardSheet: View {
    let sheet: SheetPresentation
    @Environment(\.sheetdClose) private var close

    var body: some View {
        VStack(alignment: .leading, spacing: 12) {
            HStack {
                Text(sheet.header?.title ?? "Your offers").font(.headline)
                Spacer()
                if sheet.dismissAffordance == .closeIcon {
                    Button { close(.closeButton) } label: { Image(systemName: "xmark.circle.fill") }
                        .accessibilityLabel("Close")
                }
            }
            Text("2 % cashback on groceries this month, and a travel card with no foreign fees.")
                .fixedSize(horizontal: false, vertical: true)
            if let button = sheet.primaryButton {
                Button(button.label) { close(.action) }.buttonStyle(.borderedProminent)
            } else {
                Button("Not now") { close(.closeButton) }
            }
        }
        .padding(20)
        .sheetdReportsContentHeight()
        .frame(maxHeight: .infinity, alignment: .top)
    }
}
