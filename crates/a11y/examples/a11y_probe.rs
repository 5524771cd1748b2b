//! Print a desktop's accessibility tree: `a11y_probe SESSION_BUS_ADDRESS` (a debugging aid).
#[tokio::main]
async fn main() {
    let address = std::env::args().nth(1).unwrap_or_default();
    let bus = match screenpilot_a11y::Bus::connect(&address).await {
        Ok(bus) => bus,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let trees = bus
        .trees(screenpilot_a11y::Bounds::new(0, 0, 4096, 4096))
        .await
        .expect("trees");
    for window in &trees.windows {
        for e in &window.elements {
            println!("{}", e.line());
        }
    }
}
