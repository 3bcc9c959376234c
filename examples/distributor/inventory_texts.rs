//! How the inventory tools' results read for the model.

use erp_tools_core::ModelText;

use super::{ReorderRow, StockView};
use crate::data::qty;

impl ModelText for StockView {
    fn model_text(&self) -> String {
        let conversions: Vec<String> = self
            .units
            .iter()
            .filter(|u| u.uom != self.base_uom)
            .map(|u| format!("1 {} = {} {}", u.uom, qty(u.factor), self.base_uom))
            .collect();
        let units: Vec<&str> = self.units.iter().map(|u| u.uom.as_str()).collect();
        let warehouses: Vec<String> = self
            .warehouses
            .iter()
            .map(|w| {
                format!(
                    "{}: {} {} on hand, reorder point {}{}",
                    w.warehouse_code,
                    qty(w.qty),
                    self.base_uom,
                    qty(w.reorder_point),
                    if w.below_reorder {
                        ", below the reorder point"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        format!(
            "{} {}, ordered in {}{}. {}.",
            self.item_code,
            self.item_name,
            units.join(", "),
            if conversions.is_empty() {
                String::new()
            } else {
                format!(" ({})", conversions.join(", "))
            },
            if warehouses.is_empty() {
                "Not stocked in any warehouse of your branch".into()
            } else {
                warehouses.join("; ")
            }
        )
    }
}

impl ModelText for ReorderRow {
    fn model_text(&self) -> String {
        format!(
            "{} {} in {}: {} of {} {}, short {} {}, below the reorder point",
            self.item_code,
            self.item_name,
            self.warehouse_code,
            qty(self.qty),
            qty(self.reorder_point),
            self.base_uom,
            qty(self.shortfall),
            self.base_uom
        )
    }
}
