package ex;
public class Counter {
    private int hits;
    public void hit() { hits++; }
    public int hits() { return hits; }
}
