export default function Page() { return <p>call-detail</p>; }
