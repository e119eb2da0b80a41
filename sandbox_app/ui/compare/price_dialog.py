"""Edit the per-model price table (US dollars per million tokens) used for comparison costs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.results.compare import Price
from sandbox_app.ui.common.plain import plain_label


class PriceDialog(QDialog):
    """One row per model; leave a price empty to show the cost as unknown ("—")."""

    def __init__(
        self, prices: dict[str, Price], models: list[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Model prices")
        names = sorted({*prices, *(m for m in models if m)})
        self.table = QTableWidget(len(names) + 1, 3)
        self.table.setHorizontalHeaderLabels(["Model", "Input $/1M", "Output $/1M"])
        for row, name in enumerate(names):
            price = prices.get(name)
            cells = (
                [name, "", ""]
                if price is None
                else [
                    name,
                    f"{price.input_per_million:g}",
                    f"{price.output_per_million:g}",
                ]
            )
            for col, text in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(text))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label("Prices per million tokens. Empty means unknown, shown as —."))
        layout.addWidget(self.table)
        layout.addWidget(buttons)

    def prices(self) -> dict[str, Price]:
        """The rows with a model name and two valid numbers."""
        result: dict[str, Price] = {}
        for row in range(self.table.rowCount()):
            texts = [
                (item.text().strip() if (item := self.table.item(row, col)) else "")
                for col in range(3)
            ]
            try:
                price = Price(float(texts[1]), float(texts[2]))
            except ValueError:
                continue
            if texts[0]:
                result[texts[0]] = price
        return result


def open_prices(
    prices: dict[str, Price], models: list[str], parent: QWidget, done: Callable[..., None]
) -> PriceDialog:
    """The dialog, open, for the prices and the lanes' models; ``done`` gets the new table."""
    dialog = PriceDialog(prices, models, parent)
    dialog.accepted.connect(lambda: done(dialog.prices()))
    dialog.open()
    return dialog
