fn main() {
    let greeting = "hello, tinytool";
    println!("{greeting}");
}
