use super::super::kinds::shape::*;
use super::*;

fn allowed(wire: &str, shape: u16) -> bool {
    matches!(
        judge_draft(wire, shape, None, false),
        DraftVerdict::Allowed(_)
    )
}

#[test]
fn the_examples_the_issue_names_are_refused_in_a_draft() {
    let refused: &[(&str, u16)] = &[
        // Named in the last round, still compiling then.
        ("is_posted", BOOL),
        ("auto_submit", BOOL),
        ("send_to_vendor", BOOL),
        ("approved", BOOL),
        ("cost_override", NUMBER),
        ("cost", NUMBER),
        // iDempiere, Acumatica, NetSuite workflow and approval fields.
        ("DocAction", ENUM),
        ("DocAction", TEXT),
        ("IsApproved", BOOL),
        ("Processed", BOOL),
        ("Posted", BOOL),
        ("Hold", BOOL),
        ("Approved", BOOL),
        ("supervisorApproval", BOOL),
        ("toBeEmailed", BOOL),
        // People.
        ("SalesRep_ID", NUMBER),
        ("fk_user_author", NUMBER),
        ("OrdererPersonnelNumber", TEXT),
        ("BuyerId", NUMBER),
        ("validated_by", TEXT),
        // Companies and organisations.
        ("AD_Client_ID", NUMBER),
        ("AD_Org_ID", NUMBER),
        ("dataAreaId", TEXT),
        ("subsidiary", TEXT),
        ("MEGAENTITYID", TEXT),
        ("ProcurementBUId", NUMBER),
        ("org_unit_id", NUMBER),
        // Prices, taxes, rates, discounts.
        ("subprice", NUMBER),
        ("UIPRICE", NUMBER),
        ("tva_tx", NUMBER),
        ("multicurrency_tx", NUMBER),
        ("EXCHRATE", NUMBER),
        ("remise_percent", NUMBER),
        ("ExtendedCost", NUMBER),
        // Indonesian.
        ("harga_satuan", NUMBER),
        ("diskon", NUMBER),
        ("pajak", NUMBER),
        ("ppn_persen", NUMBER),
        ("disetujui", BOOL),
        ("status_dokumen", TEXT),
        ("kurs", NUMBER),
        ("dibuat_oleh", TEXT),
        ("cabang_id", NUMBER),
        ("perusahaan_id", NUMBER),
        // Counts the ERP keeps, dates of the books.
        ("qty_received", NUMBER),
        ("QtyDelivered", NUMBER),
        ("qty_to_invoice", NUMBER),
        ("DateAcct", DATE),
        ("posting_date", DATE),
        ("tanggal_posting", DATE),
    ];
    let admitted: Vec<String> = refused
        .iter()
        .filter(|(w, s)| allowed(w, *s))
        .map(|(w, s)| format!("{w} ({s})"))
        .collect();
    assert!(admitted.is_empty(), "admitted in a draft: {admitted:?}");
}

#[test]
fn company_and_person_fields_are_refused_in_every_tier() {
    for wire in [
        "AD_Client_ID",
        "AD_Org_ID",
        "dataAreaId",
        "subsidiary",
        "MEGAENTITYID",
        "ProcurementBUId",
        "SoldToLegalEntityId",
        "org_unit_id",
        "cabang_id",
        "perusahaan_id",
        "kode_cabang",
        "BuyerId",
        "fk_user_author",
        "SalesRep_ID",
        "OrdererPersonnelNumber",
        "validated_by",
        "dibuat_oleh",
        "disetujui_oleh",
        "pegawai_id",
        "entity",
        "client_id",
    ] {
        assert!(classify(wire).is_some(), "{wire} taken by a read tool");
    }
    for wire in [
        "client_ref",
        "vendor_code",
        "company_name",
        "nama_perusahaan",
        "warehouse",
    ] {
        assert_eq!(classify(wire), None, "{wire}");
    }
}

#[test]
fn an_ambiguous_party_is_taken_once_declared_a_counterparty() {
    let entity = judge_draft("entity", TEXT, None, false);
    assert!(matches!(
        entity,
        DraftVerdict::EveryTier(Forbidden::Ambiguous("entity"))
    ));
    let declared = judge_draft(
        "entity",
        TEXT,
        Some((Kind::Reference, Some("vendor"))),
        false,
    );
    assert!(matches!(declared, DraftVerdict::Allowed(_)), "{declared:?}");
    // Declared as something that is not a counterparty, it stays refused; and a company
    // word cannot be declared away.
    let not_party = judge_draft(
        "entity",
        TEXT,
        Some((Kind::Reference, Some("subsidiary"))),
        false,
    );
    assert!(matches!(not_party, DraftVerdict::EveryTier(_)));
    let company = judge_draft(
        "AD_Org_ID",
        NUMBER,
        Some((Kind::Reference, Some("vendor"))),
        false,
    );
    assert!(matches!(company, DraftVerdict::EveryTier(_)));
    // A declared kind never lifts a draft category.
    let price = judge_draft("harga_satuan", NUMBER, Some((Kind::Quantity, None)), false);
    assert!(matches!(price, DraftVerdict::Draft(_)));
}

#[test]
fn the_safe_twins_are_taken() {
    let safe: &[(&str, u16)] = &[
        ("vendor_code", TEXT),
        ("C_BPartner_ID", NUMBER),
        ("M_Product_ID", NUMBER),
        ("M_Warehouse_ID", NUMBER),
        ("QtyOrdered", NUMBER),
        ("QtyEntered", NUMBER),
        ("OrderQty", NUMBER),
        ("DatePromised", DATE),
        ("needed_by", DATE),
        ("Description", TEXT),
        ("POReference", TEXT),
        ("VENDORID", TEXT),
        ("ITEMID", TEXT),
        ("QUANTITY", NUMBER),
        ("MEMO", TEXT),
        ("WHENDUE", DATE),
        ("WAREHOUSEID", TEXT),
        ("fk_product", NUMBER),
        ("qty", NUMBER),
        ("note_public", TEXT),
        ("date_livraison", DATE),
        ("ref_supplier", TEXT),
        ("OrderVendorAccountNumber", TEXT),
        ("ItemNumber", TEXT),
        ("OrderedPurchaseQuantity", NUMBER),
        ("RequestedDeliveryDate", DATE),
        ("LineDescription", TEXT),
        ("VendorID", TEXT),
        ("InventoryID", TEXT),
        ("PromisedOn", DATE),
        ("expectedReceiptDate", DATE),
        ("memo", TEXT),
        ("line_ids", OBJECT),
        ("order_line", OBJECT),
        ("lines", OBJECT),
        ("priority", ENUM),
        ("uom", ENUM),
        ("C_UOM_ID", NUMBER),
        ("currency", ENUM),
        ("kode_barang", TEXT),
        ("kode_pemasok", TEXT),
        ("jumlah", NUMBER),
        ("kuantitas", NUMBER),
        ("catatan", TEXT),
        ("keterangan", TEXT),
        ("tanggal_kirim", DATE),
        ("tanggal_dibutuhkan", DATE),
        ("satuan", ENUM),
        ("gudang", TEXT),
        ("client_ref", TEXT),
        ("Line", NUMBER),
        ("line_no", NUMBER),
        ("post_code", TEXT),
        ("valid_until", DATE),
        ("number", TEXT),
        ("po_number", TEXT),
        ("DocumentNo", TEXT),
    ];
    let refused: Vec<String> = safe
        .iter()
        .filter(|(w, s)| !allowed(w, *s))
        .map(|(w, s)| format!("{w} ({s}): {:?}", judge_draft(w, *s, None, false)))
        .collect();
    assert!(
        refused.is_empty(),
        "refused in a draft:\n{}",
        refused.join("\n")
    );
}

#[test]
fn a_field_of_no_kind_is_refused_until_declared() {
    for (wire, shape) in [
        ("foo", TEXT),
        ("flag", BOOL),
        ("amount_hint", NUMBER),
        ("date", DATE),
        ("gizmo_code", TEXT),
    ] {
        assert!(!allowed(wire, shape), "{wire}");
    }
    // The same names declared: a kind fits its types only.
    assert!(matches!(
        judge_draft("flag", BOOL, Some((Kind::Choice, None)), false),
        DraftVerdict::Allowed(_)
    ));
    assert!(matches!(
        judge_draft("foo", TEXT, Some((Kind::Quantity, None)), false),
        DraftVerdict::Mismatch(_)
    ));
    // A nested object, an enum and a type that declares its kind are judged by themselves.
    assert!(allowed("shipping", OBJECT));
    assert!(allowed("incoterm_choice", ENUM));
    assert!(matches!(
        judge_draft("foo", TEXT, None, true),
        DraftVerdict::Allowed(_)
    ));
    // A name that says a kind its type does not fit.
    assert!(matches!(
        judge_draft("qty", TEXT, None, false),
        DraftVerdict::Mismatch(_)
    ));
    assert!(matches!(
        judge_draft("needed_by", TEXT, None, false),
        DraftVerdict::Mismatch(_)
    ));
}
